import type { Keyring } from '#lib/crypto/keyring';
import { openSecret } from '#lib/crypto/open';
import type { SealedSecret } from '#lib/crypto/sealed-secret';
import { secretsKeyring } from '#lib/crypto/secrets-keyring';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { encryptionContextOf, type PortalCredentials, type SecretField } from './credentials.ts';

/**
 * For the run credentials function only (the one function granted kms:Decrypt; lib/portal/run-credentials.ts):
 * the clear credentials of a stored account, for a browser worker to type into the portal. Keep the
 * result in memory; never log or persist it.
 */
export const openPortalCredentials = async (
  account: StoredPortalAccount,
  keyring: Keyring = secretsKeyring(),
): Promise<PortalCredentials> => {
  const open = (field: SecretField, sealed: SealedSecret) =>
    openSecret(keyring, sealed, encryptionContextOf(account, field));
  return {
    username: account.username,
    password: await open('password', account.password),
    totpSecret: account.totpSecret ? await open('totpSecret', account.totpSecret) : null,
  };
};
