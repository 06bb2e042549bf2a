import { createCipheriv, randomBytes } from 'node:crypto';
import { loadOrCreateKeyFile } from '#lib/crypto/key-file';
import { canonicalContext, type EncryptionContext } from '#lib/crypto/keyring';
import { localKeyIdOf } from '#lib/crypto/local-keyring';
import type { SealedSecretV1 } from '#lib/crypto/sealed-secret';

/**
 * A v1 envelope as the local keyring sealed secrets before the Encryption SDK: a random data key
 * wrapped with AES-256-GCM under the key file's key (iv ‖ ciphertext ‖ tag), the secret under the
 * data key, the canonical context as AAD of both. Stored items of that era look like this; the
 * unit tests also hold envelopes written by the old code itself (test/unit/crypto-envelope.test.ts).
 */
const gcm = (key: Buffer, plaintext: Buffer, context: EncryptionContext) => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(canonicalContext(context));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ct, tag: cipher.getAuthTag() };
};

export const sealV1WithLocalKey = (keyFile: string, secret: string, context: EncryptionContext): SealedSecretV1 => {
  const key = loadOrCreateKeyFile(keyFile);
  const dataKey = randomBytes(32);
  const wrapped = gcm(key, dataKey, context);
  const sealed = gcm(dataKey, Buffer.from(secret, 'utf8'), context);
  return {
    v: 1,
    alg: 'AES-256-GCM',
    keyring: 'local',
    keyId: localKeyIdOf(key),
    edk: Buffer.concat([wrapped.iv, wrapped.ct, wrapped.tag]).toString('base64'),
    iv: sealed.iv.toString('base64'),
    ct: sealed.ct.toString('base64'),
    tag: sealed.tag.toString('base64'),
  };
};
