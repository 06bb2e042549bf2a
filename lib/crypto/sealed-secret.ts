/*
 * A secret as stored: the sealed form envelope.ts writes and reads. Types only, with no import, so
 * that the entities that store sealed secrets (lib/entities/portal-account.ts, webhook.ts) depend on
 * the form and not on the Encryption SDK (docs/architecture.md).
 */

export type KeyringKind = 'kms' | 'local';

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
