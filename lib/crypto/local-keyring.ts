import { createDecipheriv, createHash } from 'node:crypto';
import { RawAesKeyringNode, RawAesWrappingSuiteIdentifier } from '@aws-crypto/raw-aes-keyring-node';
import { loadOrCreateKeyFile } from './key-file.ts';
import { canonicalContext, type EncryptionContext, type Keyring, SecretDecryptionError } from './keyring.ts';

/**
 * Keyring adapter for the local stack: the key-encryption key is a 256-bit key in a file under the
 * local state directory (created on first use, mode 0600). The Encryption SDK's raw AES keyring
 * wraps each data key with AES-256-GCM under it, binding the encryption context, so a wrapped key
 * only unwraps with the context it was issued for (as with KMS). Its key name is the key's
 * fingerprint: an envelope sealed under another local key names a key this keyring does not hold.
 *
 * v1 wrapped data key layout (before the Encryption SDK): iv (12) ‖ ciphertext (32) ‖ tag (16),
 * the canonical context as additional authenticated data.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_NAMESPACE = 'service-review/local-secrets-key';

/** A stable, non-secret name for a key: the first 16 hex digits of a domain-separated SHA-256. */
export const localKeyIdOf = (key: Buffer) =>
  `local:${createHash('sha256').update('service-review/local-secrets-key/v1\n').update(key).digest('hex').slice(0, 16)}`;

export const localKeyring = (keyFile: string): Keyring => {
  let cached: { key: Buffer; keyId: string; keyring: RawAesKeyringNode } | undefined;
  const kek = () => {
    if (!cached) {
      const key = loadOrCreateKeyFile(keyFile);
      const keyId = localKeyIdOf(key);
      const keyring = new RawAesKeyringNode({
        keyNamespace: KEY_NAMESPACE,
        keyName: keyId,
        // The SDK takes a buffer of its own (not a view into Node's shared pool).
        unencryptedMasterKey: Uint8Array.from(key),
        wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
        // The context, authenticated with the wrapped key, in UTF-8 byte order, as the SDK's encrypt stream
        // writes the message header. The keyring's default is String#localeCompare, whose first call loads
        // ICU's collation (about 7 ms of the first seal, which the KMS keyring never pays). The order
        // differs only where keys differ in case or past ASCII; encryptionContextOf's keys do neither, so
        // envelopes sealed either way open (crypto-envelope.test.ts).
        utf8Sorting: true,
      });
      cached = { key, keyId, keyring };
    }
    return cached;
  };

  return {
    kind: 'local',
    // Unwrapping is local: nothing transient can fail.
    encryptionSdkKeyring: () => ({ keyring: kek().keyring, transientFailure: () => undefined }),
    unwrapDataKey: async (wrapped: Buffer, keyId: string, context: EncryptionContext) => {
      const { key, keyId: ownKeyId } = kek();
      if (keyId !== ownKeyId || wrapped.length !== IV_BYTES + 32 + TAG_BYTES) throw new SecretDecryptionError();
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, wrapped.subarray(0, IV_BYTES), {
          authTagLength: TAG_BYTES,
        });
        decipher.setAAD(canonicalContext(context));
        decipher.setAuthTag(wrapped.subarray(wrapped.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(wrapped.subarray(IV_BYTES, wrapped.length - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch {
        throw new SecretDecryptionError();
      }
    },
  };
};
