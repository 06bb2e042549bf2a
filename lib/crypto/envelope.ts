import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  canonicalContext,
  type EncryptionContext,
  type Keyring,
  type KeyringKind,
  SecretDecryptionError,
} from './keyring.ts';

/**
 * Envelope encryption of one secret: a fresh 256-bit data key per secret (from the keyring),
 * AES-256-GCM over the UTF-8 secret with a random 96-bit IV and the canonical encryption context
 * as additional authenticated data. What is stored is the sealed form below: the data key only
 * wrapped, never in clear. Opening needs the same keyring kind, key and the exact context.
 */
export interface SealedSecret {
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

const IV_BYTES = 12;
/** Pinned: GCM would otherwise accept a truncated tag. */
const TAG_BYTES = 16;

export const sealSecret = async (
  keyring: Keyring,
  secret: string,
  context: EncryptionContext,
): Promise<SealedSecret> => {
  const dataKey = await keyring.generateDataKey(context);
  try {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', dataKey.plaintext, iv);
    cipher.setAAD(canonicalContext(context));
    const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return {
      v: 1,
      alg: 'AES-256-GCM',
      keyring: keyring.kind,
      keyId: dataKey.keyId,
      edk: dataKey.wrapped.toString('base64'),
      iv: iv.toString('base64'),
      ct: ct.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
    };
  } finally {
    dataKey.plaintext.fill(0);
  }
};

export const openSecret = async (
  keyring: Keyring,
  sealed: SealedSecret,
  context: EncryptionContext,
): Promise<string> => {
  if (sealed?.v !== 1 || sealed.alg !== 'AES-256-GCM' || sealed.keyring !== keyring.kind) {
    throw new SecretDecryptionError('The secret was sealed in a format or by a keyring this keyring cannot open');
  }
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
