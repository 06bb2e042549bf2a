import { VersionConflict } from '#lib/concurrency';
import { CURRENT_ENVELOPE_VERSION } from '#lib/crypto/envelope';
import type { Keyring } from '#lib/crypto/keyring';
import { openSecret } from '#lib/crypto/open';
import type { SealedSecret } from '#lib/crypto/sealed-secret';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { log } from '#lib/observability/logger';
import { encryptionContextOf, type SecretField } from './credentials.ts';
import type { PortalAccountStore } from './portal-account-store.ts';
import { sealCredential } from './seal-credentials.ts';

export interface ResealCounts {
  /** Accounts found with an older envelope. */
  found: number;
  /** Re-sealed and written back. */
  resealed: number;
  /** Written by someone else meanwhile (left as that write left them: run again). */
  changedConcurrently: number;
  /** Could not be opened with this keyring (logged by id; nothing written). */
  failed: number;
}

/**
 * Re-seals every older envelope (v1) of the given accounts as a current one (v2, the Encryption
 * SDK): open with the keyring, seal anew under the same context, write back only if the account
 * has not changed meanwhile. Not a change a client sees: version, ETag and updatedAt stay as they
 * are. Idempotent: an account whose envelopes are current is not written.
 */
export const resealPortalSecrets = async ({
  accounts,
  store,
  keyring,
}: {
  accounts: AsyncIterable<StoredPortalAccount>;
  store: Pick<PortalAccountStore, 'update'>;
  keyring: Keyring;
}): Promise<ResealCounts> => {
  const counts: ResealCounts = { found: 0, resealed: 0, changedConcurrently: 0, failed: 0 };
  const current = async (account: StoredPortalAccount, field: SecretField, sealed: SealedSecret) =>
    sealed.v === CURRENT_ENVELOPE_VERSION
      ? sealed
      : sealCredential(keyring, account, field, await openSecret(keyring, sealed, encryptionContextOf(account, field)));

  for await (const account of accounts) {
    const stale = [account.password, account.totpSecret].some((s) => s && s.v !== CURRENT_ENVELOPE_VERSION);
    if (!stale) continue;
    counts.found++;
    const ids = {
      clientId: account.clientId,
      organizationId: account.organizationId,
      portalAccountId: account.externalId,
    };
    try {
      const resealed: StoredPortalAccount = {
        ...account,
        password: await current(account, 'password', account.password),
        totpSecret: account.totpSecret && (await current(account, 'totpSecret', account.totpSecret)),
      };
      await store.update(resealed, account.version);
      counts.resealed++;
    } catch (error) {
      if (error instanceof VersionConflict) {
        counts.changedConcurrently++;
        continue;
      }
      counts.failed++;
      log.warn('Portal account secrets not re-sealed', { ...ids, errorName: (error as Error).name });
    }
  }
  return counts;
};
