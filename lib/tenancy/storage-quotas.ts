import { storageQuotaDefaults } from '#lib/config/settings';
import { LimitReached } from '#lib/errors';
import { log } from '#lib/observability/logger';
import type { StorageUsageStore } from './storage-usage.ts';
import type { TenantStore } from './tenant-store.ts';

/**
 * Quotas on what a client stores (docs/security.md, "Quotas"): the bytes of its attachments, and the
 * portal accounts and payer connections of each of its organizations. The client's own quotas (its Client item, set by
 * `set-storage-quotas`) or else the configured defaults. A reservation is counted before what it
 * stands for is written, and released once that is gone: a failure in between leaves a count too high
 * (the client has less room than it should), never one too low.
 */
export interface StorageQuotaDependencies {
  usage: StorageUsageStore;
  tenants: Pick<TenantStore, 'getClient'>;
  defaults?: typeof storageQuotaDefaults;
  now?: () => Date;
}

/** The client's own quotas, or the defaults where it has none. */
const quotasOf = async (
  { tenants, defaults }: Required<Pick<StorageQuotaDependencies, 'tenants' | 'defaults'>>,
  clientId: string,
) => {
  const client = await tenants.getClient(clientId);
  const fallback = defaults();
  return {
    attachmentBytes: client?.attachmentBytesQuota ?? fallback.attachmentBytes,
    portalAccounts: client?.portalAccountsQuota ?? fallback.portalAccountsPerOrganization,
    payerConnections: client?.payerConnectionsQuota ?? fallback.payerConnectionsPerOrganization,
  };
};

/** A count that could not be taken back is only logged: it errs on the side of the quota. */
const logged = (what: string, ids: Record<string, string>) => (error: Error) =>
  log.error(`${what} release failed; the count stays high`, { ...ids, errorName: error?.name });

export const storageQuotas = ({
  usage,
  tenants,
  defaults = storageQuotaDefaults,
  now = () => new Date(),
}: StorageQuotaDependencies) => {
  const quotas = (clientId: string) => quotasOf({ tenants, defaults }, clientId);
  return {
    /** Counts `bytes` more for the client, or refuses (LimitReached) what would exceed its quota. */
    reserveAttachmentBytes: async (clientId: string, bytes: number) => {
      const quota = (await quotas(clientId)).attachmentBytes;
      if (await usage.reserveAttachmentBytes(clientId, bytes, quota, now().toISOString())) return;
      throw new LimitReached(
        `Storing ${bytes} more bytes would exceed this client's attachment storage quota of ${quota} bytes; delete attachments to make room.`,
        { quota: 'attachmentBytes', limit: quota },
      );
    },

    /** Gives back the bytes of an attachment record that is gone (or was never written). Never throws. */
    releaseAttachmentBytes: async (clientId: string, bytes: number) => {
      await usage
        .releaseAttachmentBytes(clientId, bytes, now().toISOString())
        .then((released) => {
          if (!released) log.warn('Attachment bytes released beyond the count', { size: bytes });
        })
        .catch(logged('Attachment bytes', {}));
    },

    /** Counts one more portal account in the organization, or refuses (LimitReached) at its quota. */
    reservePortalAccount: async (clientId: string, organizationId: string) => {
      const quota = (await quotas(clientId)).portalAccounts;
      if (await usage.reservePortalAccount(clientId, organizationId, quota, now().toISOString())) return;
      throw new LimitReached(
        `This organization already has ${quota} portal accounts, the most it may have; delete one to add another.`,
        { quota: 'portalAccountsPerOrganization', limit: quota },
      );
    },

    /** Counts one portal account less in the organization. Never throws. */
    releasePortalAccount: async (clientId: string, organizationId: string) => {
      await usage
        .releasePortalAccount(clientId, organizationId, now().toISOString())
        .then((released) => {
          if (!released) log.warn('Portal account released beyond the count', { organizationId });
        })
        .catch(logged('Portal account count', { organizationId }));
    },

    /** Counts one more payer connection in the organization, or refuses (LimitReached) at its quota. */
    reservePayerConnection: async (clientId: string, organizationId: string) => {
      const quota = (await quotas(clientId)).payerConnections;
      if (await usage.reservePayerConnection(clientId, organizationId, quota, now().toISOString())) return;
      throw new LimitReached(
        `This organization already has ${quota} payer connections, the most it may have; delete one to add another.`,
        { quota: 'payerConnectionsPerOrganization', limit: quota },
      );
    },

    /** Counts one payer connection less in the organization. Never throws. */
    releasePayerConnection: async (clientId: string, organizationId: string) => {
      await usage
        .releasePayerConnection(clientId, organizationId, now().toISOString())
        .then((released) => {
          if (!released) log.warn('Payer connection released beyond the count', { organizationId });
        })
        .catch(logged('Payer connection count', { organizationId }));
    },
  };
};

export type StorageQuotas = ReturnType<typeof storageQuotas>;
