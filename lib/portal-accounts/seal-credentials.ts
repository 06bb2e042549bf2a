import type { Keyring } from '#lib/crypto/keyring';
import { sealSecret } from '#lib/crypto/seal';
import { secretsKeyring } from '#lib/crypto/secrets-keyring';
import { type AccountRef, type CredentialSealer, encryptionContextOf, type SecretField } from './credentials.ts';

export const sealCredential = (keyring: Keyring, account: AccountRef, field: SecretField, secret: string) =>
  sealSecret(keyring, secret, encryptionContextOf(account, field));

export const credentialSealer =
  (keyring: () => Keyring = secretsKeyring): CredentialSealer =>
  (account, field, secret) =>
    sealCredential(keyring(), account, field, secret);
