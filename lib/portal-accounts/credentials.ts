import { openSecret, type SealedSecret, sealSecret } from '#lib/crypto/envelope';
import type { EncryptionContext, Keyring } from '#lib/crypto/keyring';
import { secretsKeyring } from '#lib/crypto/secrets-keyring';
import type { StoredPortalAccount } from './portal-account-store.ts';

/**
 * Portal-account secrets and their encryption context. The context names the tenant and the
 * exact slot a secret belongs to; KMS (and the local keyring) refuse to unwrap with any other,
 * so a ciphertext copied to another client's, organization's or account's item, or swapped
 * between the password and TOTP slots, does not open. KMS logs the context in CloudTrail: ids
 * only, never secrets or usernames.
 */
export type SecretField = 'password' | 'totpSecret';

export const PURPOSE = 'portal-account-credential';

export interface AccountRef {
  clientId: string;
  organizationId: string;
  externalId: string;
}

export const encryptionContextOf = (account: AccountRef, field: SecretField): EncryptionContext => ({
  purpose: PURPOSE,
  clientId: account.clientId,
  organizationId: account.organizationId,
  portalAccountId: account.externalId,
  field,
});

export const sealCredential = (keyring: Keyring, account: AccountRef, field: SecretField, secret: string) =>
  sealSecret(keyring, secret, encryptionContextOf(account, field));

/** Seals one secret of one account (portal-accounts.ts takes it as a dependency: see service.ts). */
export type CredentialSealer = (account: AccountRef, field: SecretField, secret: string) => Promise<SealedSecret>;

export const credentialSealer =
  (keyring: () => Keyring = secretsKeyring): CredentialSealer =>
  (account, field, secret) =>
    sealCredential(keyring(), account, field, secret);

export interface PortalCredentials {
  username: string;
  password: string;
  totpSecret: string | null;
}

/**
 * For the RPA worker only (the one function granted kms:Decrypt): the clear credentials of a
 * stored account, to type into the portal. Keep the result in memory; never log or persist it.
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
