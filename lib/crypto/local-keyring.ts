import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { loadOrCreateKeyFile } from './key-file.ts';
import { canonicalContext, type EncryptionContext, type Keyring, SecretDecryptionError } from './keyring.ts';

/**
 * Keyring adapter for the local stack: the key-encryption key is a 256-bit key in a file under the
 * local state directory (created on first use, mode 0600). Data keys are random and wrapped with
 * AES-256-GCM under that key, with the canonical encryption context as additional authenticated
 * data, so a wrapped key only unwraps with the context it was issued for (as with KMS).
 *
 * Wrapped data key layout: iv (12) ‖ ciphertext (32) ‖ tag (16).
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stable, non-secret name for a key: the first 16 hex digits of a domain-separated SHA-256. */
export const localKeyIdOf = (key: Buffer) =>
  `local:${createHash('sha256').update('service-review/local-secrets-key/v1\n').update(key).digest('hex').slice(0, 16)}`;

export const localKeyring = (keyFile: string): Keyring => {
  let cached: { key: Buffer; keyId: string } | undefined;
  const kek = () => {
    if (!cached) {
      const key = loadOrCreateKeyFile(keyFile);
      cached = { key, keyId: localKeyIdOf(key) };
    }
    return cached;
  };

  return {
    kind: 'local',
    generateDataKey: async (context: EncryptionContext) => {
      const { key, keyId } = kek();
      const plaintext = randomBytes(32);
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(canonicalContext(context));
      const wrapped = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
      return { plaintext, wrapped, keyId };
    },
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
