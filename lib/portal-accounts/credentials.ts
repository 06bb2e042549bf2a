import type { EncryptionContext } from '#lib/crypto/keyring';
import type { SealedSecret } from '#lib/crypto/sealed-secret';

/**
 * Portal-account secrets and their encryption context. The context names the tenant and the
 * exact slot a secret belongs to; KMS (and the local keyring) refuse to unwrap with any other,
 * so a ciphertext copied to another client's, organization's or account's item, or swapped
 * between the password and TOTP slots, does not open. KMS logs the context in CloudTrail: ids
 * only, never secrets or usernames.
 *
 * Sealing is in seal-credentials.ts (create and replace), opening in open-credentials.ts (the
 * run credentials function): each side bundles only its half of the Encryption SDK (lib/crypto/envelope.ts).
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

/** Seals one secret of one account (portal-account-writes.ts uses it, given to portalAccountService: see service.ts). */
export type CredentialSealer = (account: AccountRef, field: SecretField, secret: string) => Promise<SealedSecret>;

export interface PortalCredentials {
  username: string;
  password: string;
  totpSecret: string | null;
}
