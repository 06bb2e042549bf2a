/**
 * Port: the holder of the key-encryption key. A keyring issues fresh data keys (plaintext for one
 * use, plus the same key wrapped under the key-encryption key) and unwraps them again. Every
 * call carries the encryption context, which the keyring binds to the wrapped key: a wrapped key
 * only unwraps with the exact context it was issued for.
 *
 * Adapters: kms-keyring.ts (AWS KMS GenerateDataKey / Decrypt) and local-keyring.ts (a 256-bit
 * key in a file under the local state directory). config.ts picks one from the environment.
 */
export type EncryptionContext = Readonly<Record<string, string>>;

export type KeyringKind = 'kms' | 'local';

export interface DataKey {
  /** 32 bytes; the caller zeroes it after use. */
  plaintext: Buffer;
  /** The data key wrapped under the key-encryption key; safe to store. */
  wrapped: Buffer;
  /** Which key-encryption key wrapped it (a KMS key ARN, or a local key fingerprint). */
  keyId: string;
}

export interface Keyring {
  readonly kind: KeyringKind;
  generateDataKey(context: EncryptionContext): Promise<DataKey>;
  /** Throws SecretDecryptionError when the key, the context or the wrapped bytes do not match. */
  unwrapDataKey(wrapped: Buffer, keyId: string, context: EncryptionContext): Promise<Buffer>;
}

/** Any failure to open a sealed secret. Deliberately says nothing about which check failed. */
export class SecretDecryptionError extends Error {
  constructor(reason = 'The secret could not be decrypted with this keyring and encryption context') {
    super(reason);
    this.name = 'SecretDecryptionError';
  }
}

/** Context as additional authenticated data: keys sorted, so equal contexts give equal bytes. */
export const canonicalContext = (context: EncryptionContext): Buffer =>
  Buffer.from(
    JSON.stringify(
      Object.keys(context)
        .sort()
        .map((name) => [name, context[name]]),
    ),
    'utf8',
  );
