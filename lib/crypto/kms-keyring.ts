import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { type EncryptionContext, type Keyring, SecretDecryptionError } from './keyring.ts';

/**
 * Keyring adapter for AWS KMS. Each data key comes from GenerateDataKey (AES_256) on the
 * configured symmetric KMS key, with the encryption context; KMS binds the context to the wrapped
 * key, records it in CloudTrail, and Decrypt refuses any other context. The API functions hold
 * kms:GenerateDataKey only; kms:Decrypt is granted to the RPA worker alone.
 */
type KmsSender = Pick<KMSClient, 'send'>;

/** KMS error names that mean "this ciphertext does not open with this key and context". */
const REFUSALS = new Set(['InvalidCiphertextException', 'IncorrectKeyException', 'AccessDeniedException']);

export const kmsKeyring = (kms: KmsSender, keyId: string): Keyring => ({
  kind: 'kms',
  generateDataKey: async (context: EncryptionContext) => {
    const out = await kms.send(
      new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { ...context } }),
    );
    if (!out.Plaintext || !out.CiphertextBlob || !out.KeyId) throw new Error('KMS GenerateDataKey returned no key');
    return { plaintext: Buffer.from(out.Plaintext), wrapped: Buffer.from(out.CiphertextBlob), keyId: out.KeyId };
  },
  unwrapDataKey: async (wrapped: Buffer, wrappedKeyId: string, context: EncryptionContext) => {
    try {
      // KeyId pins the key the envelope names, so a ciphertext cannot redirect Decrypt to another key.
      const out = await kms.send(
        new DecryptCommand({ CiphertextBlob: wrapped, KeyId: wrappedKeyId, EncryptionContext: { ...context } }),
      );
      if (!out.Plaintext) throw new SecretDecryptionError();
      return Buffer.from(out.Plaintext);
    } catch (error) {
      if (error instanceof SecretDecryptionError || REFUSALS.has((error as Error).name)) {
        throw new SecretDecryptionError();
      }
      throw error;
    }
  },
});
