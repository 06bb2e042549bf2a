import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { CLIENT_OPTIONS, SUITE } from './envelope.ts';
import type { EncryptionContext, Keyring } from './keyring.ts';
import type { SealedSecretV2 } from './sealed-secret.ts';

/** The sealing side of envelope.ts: the functions that write secrets (create and replace portal account). */
const { encrypt } = buildEncrypt(CLIENT_OPTIONS);

export const sealSecret = async (
  keyring: Keyring,
  secret: string,
  context: EncryptionContext,
): Promise<SealedSecretV2> => {
  const { result } = await encrypt(keyring.encryptionSdkKeyring().keyring, Buffer.from(secret, 'utf8'), {
    encryptionContext: { ...context },
    suiteId: SUITE,
  });
  return { v: 2, keyring: keyring.kind, message: result.toString('base64') };
};
