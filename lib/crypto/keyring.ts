import type { KeyringNode } from '@aws-crypto/material-management-node';
import type { KeyringKind } from './sealed-secret.ts';

/**
 * Port: the holder of the key-encryption key. Secrets are sealed by the AWS Encryption SDK
 * (envelope.ts), which asks a keyring of its own for data keys; each adapter builds that keyring
 * over its key-encryption key. Envelopes sealed before the Encryption SDK (v1) still open: for
 * them the adapter unwraps the data key itself. Either way the wrapped key is bound to the
 * encryption context: it only unwraps with the exact context it was issued for.
 *
 * Adapters: kms-keyring.ts (AWS KMS GenerateDataKey / Decrypt) and local-keyring.ts (a 256-bit
 * key in a file under the local state directory). secrets-keyring.ts picks one from the environment.
 */
export type EncryptionContext = Readonly<Record<string, string>>;

/** An Encryption SDK keyring for one seal or open. */
interface EncryptionSdkKeyring {
  keyring: KeyringNode;
  /**
   * The SDK folds every failure to unwrap into one error. This is the first failure that was not a
   * refusal of the key or context (throttling, network), if any: the caller rethrows it, so that a
   * transient failure is retried instead of being reported as an undecryptable secret.
   */
  transientFailure(): unknown;
}

export interface Keyring {
  readonly kind: KeyringKind;
  /** A fresh Encryption SDK keyring over the key-encryption key (v2 envelopes). */
  encryptionSdkKeyring(): EncryptionSdkKeyring;
  /**
   * v1 envelopes only: unwraps their data key (the caller zeroes it after use). Throws
   * SecretDecryptionError when the key, the context or the wrapped bytes do not match.
   */
  unwrapDataKey(wrapped: Buffer, keyId: string, context: EncryptionContext): Promise<Buffer>;
}

/** Any failure to open a sealed secret. Deliberately says nothing about which check failed. */
export class SecretDecryptionError extends Error {
  constructor(reason = 'The secret could not be decrypted with this keyring and encryption context') {
    super(reason);
    this.name = 'SecretDecryptionError';
  }
}

/** Context as additional authenticated data of v1 envelopes: keys sorted, so equal contexts give equal bytes. */
export const canonicalContext = (context: EncryptionContext): Buffer =>
  Buffer.from(
    JSON.stringify(
      Object.keys(context)
        .sort()
        .map((name) => [name, context[name]]),
    ),
    'utf8',
  );
