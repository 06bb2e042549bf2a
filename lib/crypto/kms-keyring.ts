import { type AwsEsdkKMSInterface, KmsKeyringClass } from '@aws-crypto/kms-keyring';
import {
  immutableClass,
  KeyringNode,
  type Newable,
  type NodeAlgorithmSuite,
} from '@aws-crypto/material-management-node';
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { type EncryptionContext, type Keyring, SecretDecryptionError } from './keyring.ts';

/**
 * Keyring adapter for AWS KMS. The Encryption SDK's KMS keyring gets each data key from
 * GenerateDataKey on the configured symmetric KMS key with the encryption context; KMS binds the
 * context to the wrapped key, records it in CloudTrail, and Decrypt refuses any other context. The API functions hold kms:GenerateDataKey only;
 * kms:Decrypt is granted to the RPA workers alone.
 *
 * The SDK keyring is built from @aws-crypto/kms-keyring over this process's own module-scope
 * KMSClient (lib/aws/kms.ts), not from @aws-crypto/kms-keyring-node, which would construct clients
 * of its own and bundle the aggregated KMS class and the DynamoDB-backed hierarchical keyring.
 */
type KmsSender = Pick<KMSClient, 'send'>;

/** KMS error names that mean "this ciphertext does not open with this key and context". */
const REFUSALS = new Set(['InvalidCiphertextException', 'IncorrectKeyException', 'AccessDeniedException']);
const isRefusal = (error: unknown) => REFUSALS.has((error as Error).name);

// Declared as @aws-crypto/kms-keyring-node declares its KmsKeyringNode: the mixin's class may only be
// instantiated through a subclass of it, made immutable like the SDK's own keyrings.
class SecretsKmsKeyring extends KmsKeyringClass<NodeAlgorithmSuite, AwsEsdkKMSInterface>(
  KeyringNode as unknown as Newable<KeyringNode>,
) {}
immutableClass(SecretsKmsKeyring);

/**
 * `keyId` generates data keys (ARN, id or alias) and is the only key the SDK keyring decrypts
 * with: it must be the key's ARN for that, since envelopes name the key by ARN (the CDK app sets it).
 */
export const kmsKeyring = (kms: KmsSender, keyId: string): Keyring => ({
  kind: 'kms',
  encryptionSdkKeyring: () => {
    let transient: unknown;
    const client: AwsEsdkKMSInterface = {
      generateDataKey: (input) => kms.send(new GenerateDataKeyCommand(input)),
      decrypt: async (input) => {
        try {
          return await kms.send(new DecryptCommand(input));
        } catch (error) {
          if (!isRefusal(error)) transient ??= error;
          throw error;
        }
      },
      // The keyring has a generator and no further keys, so the SDK never encrypts a data key again.
      encrypt: () => Promise.reject(new Error('The secrets keyring wraps data keys with GenerateDataKey only')),
    };
    return {
      keyring: new SecretsKmsKeyring({ clientProvider: () => client, generatorKeyId: keyId }),
      transientFailure: () => transient,
    };
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
      if (error instanceof SecretDecryptionError || isRefusal(error)) throw new SecretDecryptionError();
      throw error;
    }
  },
});
