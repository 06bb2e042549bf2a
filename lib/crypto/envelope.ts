import { createDecipheriv } from 'node:crypto';
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { AlgorithmSuiteIdentifier, CommitmentPolicy } from '@aws-crypto/material-management-node';
import {
  canonicalContext,
  type EncryptionContext,
  type Keyring,
  type KeyringKind,
  SecretDecryptionError,
} from './keyring.ts';

/**
 * Envelope encryption of one secret by the AWS Encryption SDK (docs/security.md, "Encryption of
 * portal-account secrets"): a fresh data key per secret from the keyring, key commitment required on
 * both sides, the suite AES-256-GCM with HKDF-SHA-512 and no signature, and the encryption context
 * bound to the wrapped data key and authenticated with the message. No signature: a signature keeps
 * principals that can only decrypt from forging messages for other readers, and here the only
 * principals that can decrypt (the RPA workers) are the only readers; it cost 7× per seal (measured).
 *
 * Stored: v2 below, the SDK's message in base64. v1 envelopes, this module's own AES-256-GCM
 * format before the SDK, still open (openSecret) until they are re-sealed (sealed anew on the next
 * write of the secret, or by `npm run admin -- reencrypt-portal-secrets`).
 */
export interface SealedSecretV2 {
  v: 2;
  keyring: KeyringKind;
  /** The Encryption SDK message, base64: header (context, wrapped data key), body, signature. */
  message: string;
}

/** Sealed before the Encryption SDK: AES-256-GCM under a data key wrapped by the keyring. */
export interface SealedSecretV1 {
  v: 1;
  alg: 'AES-256-GCM';
  keyring: KeyringKind;
  /** The key-encryption key (KMS key ARN or local key fingerprint). */
  keyId: string;
  /** Wrapped data key, base64. */
  edk: string;
  iv: string;
  /** Ciphertext, base64. */
  ct: string;
  tag: string;
}

export type SealedSecret = SealedSecretV2 | SealedSecretV1;

/** The version sealSecret writes; anything older is re-sealed by the migration. */
export const CURRENT_ENVELOPE_VERSION = 2;

const SUITE = AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY;
/** A message holds one data key (one KMS key, no multi-keyring); refusing more bounds a hostile one's cost. */
const clientOptions = { commitmentPolicy: CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT, maxEncryptedDataKeys: 1 };
const { encrypt } = buildEncrypt(clientOptions);
const { decrypt } = buildDecrypt(clientOptions);
/** Secrets are at most 256 characters: a larger body is not ours. */
const MAX_BODY_BYTES = 4096;

export const sealSecret = async (
  keyring: Keyring,
  secret: string,
  context: EncryptionContext,
): Promise<SealedSecretV2> => {
  const { result } = await encrypt(keyring.encryptionSdkKeyring().keyring, Buffer.from(secret, 'utf8'), {
    encryptionContext: { ...context },
    suiteId: SUITE,
  });
  return { v: 2, keyring: keyring.kind, message: result.toString('base64') };
};

/**
 * The SDK authenticates the context stored in the message but does not compare it with the one
 * the caller expects: every expected entry must be there, unchanged, and nothing else. (A signing
 * suite would add its own `aws-crypto-public-key`; the suite is pinned, so none is expected.)
 */
const isExpectedContext = (stored: EncryptionContext, expected: EncryptionContext) =>
  Object.keys(stored).length === Object.keys(expected).length &&
  Object.entries(expected).every(([name, value]) => Object.hasOwn(stored, name) && stored[name] === value);

const openV2 = async (keyring: Keyring, sealed: SealedSecretV2, context: EncryptionContext) => {
  const sdk = keyring.encryptionSdkKeyring();
  let opened: Awaited<ReturnType<typeof decrypt>>;
  try {
    opened = await decrypt(sdk.keyring, Buffer.from(sealed.message, 'base64'), { maxBodySize: MAX_BODY_BYTES });
  } catch {
    throw sdk.transientFailure() ?? new SecretDecryptionError();
  }
  try {
    const { suiteId, encryptionContext } = opened.messageHeader;
    if (suiteId !== SUITE || !isExpectedContext(encryptionContext, context)) throw new SecretDecryptionError();
    return opened.plaintext.toString('utf8');
  } finally {
    opened.plaintext.fill(0);
  }
};

/** Pinned for v1: GCM would otherwise accept a truncated tag. */
const TAG_BYTES = 16;

const openV1 = async (keyring: Keyring, sealed: SealedSecretV1, context: EncryptionContext) => {
  if (sealed.alg !== 'AES-256-GCM') throw new SecretDecryptionError();
  const dataKey = await keyring.unwrapDataKey(Buffer.from(sealed.edk, 'base64'), sealed.keyId, context);
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(sealed.iv, 'base64'), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(canonicalContext(context));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError();
  } finally {
    dataKey.fill(0);
  }
};

/** Opens a v2 or a v1 envelope sealed by this keyring for exactly this context. */
export const openSecret = async (
  keyring: Keyring,
  sealed: SealedSecret,
  context: EncryptionContext,
): Promise<string> => {
  if (sealed?.keyring !== keyring.kind) {
    throw new SecretDecryptionError('The secret was sealed in a format or by a keyring this keyring cannot open');
  }
  if (sealed.v === 2 && typeof sealed.message === 'string') return openV2(keyring, sealed, context);
  if (sealed.v === 1) return openV1(keyring, sealed, context);
  throw new SecretDecryptionError('The secret was sealed in a format or by a keyring this keyring cannot open');
};
