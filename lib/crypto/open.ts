import { createDecipheriv } from 'node:crypto';
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { CLIENT_OPTIONS, SUITE } from './envelope.ts';
import { canonicalContext, type EncryptionContext, type Keyring, SecretDecryptionError } from './keyring.ts';
import type { SealedSecret, SealedSecretV1, SealedSecretV2 } from './sealed-secret.ts';

/** The opening side of envelope.ts: the function that reads secrets (the run credentials function). */
const { decrypt } = buildDecrypt(CLIENT_OPTIONS);
/** Secrets are at most 256 characters: a larger body is not ours. */
const MAX_BODY_BYTES = 4096;

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
