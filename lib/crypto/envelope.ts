import { AlgorithmSuiteIdentifier, CommitmentPolicy } from '@aws-crypto/material-management-node';

/**
 * Envelope encryption of one secret by the AWS Encryption SDK (docs/security.md, "Encryption of
 * portal-account secrets"): a fresh data key per secret from the keyring, key commitment required on
 * both sides, the suite AES-256-GCM with HKDF-SHA-512 and no signature, and the encryption context
 * bound to the wrapped data key and authenticated with the message. No signature: a signature keeps
 * principals that can only decrypt from forging messages for other readers, and here the only
 * principals that can decrypt (the RPA workers) are the only readers; it cost 7× per seal (measured).
 *
 * Stored: v2 below, the SDK's message in base64. v1 envelopes, the project's own AES-256-GCM
 * format before the SDK, still open (openSecret) until they are re-sealed (sealed anew on the next
 * write of the secret, or by `npm run admin -- reencrypt-portal-secrets`).
 *
 * One module per side, with the settings both share here: seal.ts (sealSecret, the SDK's encrypt) and
 * open.ts (openSecret, the SDK's decrypt), so that a function that only seals never bundles decrypt
 * and one that only opens never bundles encrypt.
 */
/** The version sealSecret writes; anything older is re-sealed by the migration. */
export const CURRENT_ENVELOPE_VERSION = 2;

/** The one suite sealed with and accepted on open: committing, no signature (see above). */
export const SUITE = AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY;
/** A message holds one data key (one KMS key, no multi-keyring); refusing more bounds a hostile one's cost. */
export const CLIENT_OPTIONS = {
  commitmentPolicy: CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT,
  maxEncryptedDataKeys: 1,
} as const;
