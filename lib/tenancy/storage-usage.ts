import type { AttachmentBytesUsage, PayerConnectionsUsage, PortalAccountsUsage } from '#lib/entities/storage-usage';

/**
 * Port: what a client stores, counted, so that storage quotas hold under concurrency without
 * transactions (docs/security.md, "Quotas"). Each count is one item changed by one conditional
 * UpdateItem: the check against the quota and the change are the same write, as with a request's
 * attachment slots (lib/attachments/attachment-slots.ts).
 */
export interface StorageUsageStore {
  getAttachmentBytes(clientId: string): Promise<AttachmentBytesUsage | undefined>;
  /** Adds `bytes` if the sum stays within `quota` (one conditional write); false when it would not. */
  reserveAttachmentBytes(clientId: string, bytes: number, quota: number, at: string): Promise<boolean>;
  /** Takes `bytes` back off, never below zero; false when fewer were counted (nothing written). */
  releaseAttachmentBytes(clientId: string, bytes: number, at: string): Promise<boolean>;
  getPortalAccounts(clientId: string, organizationId: string): Promise<PortalAccountsUsage | undefined>;
  /** Counts one more account if the organization has fewer than `quota`; false when it has that many. */
  reservePortalAccount(clientId: string, organizationId: string, quota: number, at: string): Promise<boolean>;
  /** Counts one account less, never below zero; false when none was counted. */
  releasePortalAccount(clientId: string, organizationId: string, at: string): Promise<boolean>;
  getPayerConnections(clientId: string, organizationId: string): Promise<PayerConnectionsUsage | undefined>;
  /** Counts one more payer connection if the organization has fewer than `quota`; false when it has that many. */
  reservePayerConnection(clientId: string, organizationId: string, quota: number, at: string): Promise<boolean>;
  /** Counts one payer connection less, never below zero; false when none was counted. */
  releasePayerConnection(clientId: string, organizationId: string, at: string): Promise<boolean>;
}
