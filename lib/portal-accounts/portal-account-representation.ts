import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { portalOf } from './portal-registry.ts';

/** What clients read: never a secret, only whether it is set and when it changed. */
export const representationOf = (account: StoredPortalAccount) => ({
  externalId: account.externalId,
  clientUserId: account.clientUserId,
  organizationId: account.organizationId,
  portalId: account.portalId,
  portalName: portalOf(account.portalId)?.name ?? account.portalId,
  payerIds: account.payerIds,
  displayName: account.displayName,
  username: account.username,
  status: account.status,
  lastLogin: account.lastLogin,
  attention: account.attention ? { reason: account.attention.reason, since: account.attention.since } : null,
  passwordSet: true,
  passwordChangedAt: account.passwordChangedAt,
  totpSecretSet: account.totpSecret !== null,
  totpSecretChangedAt: account.totpSecretChangedAt,
  createdAt: account.createdAt,
  updatedAt: account.updatedAt,
  version: account.version,
});

export const etagOf = (account: Pick<StoredPortalAccount, 'version'>) => `"${account.version}"`;
