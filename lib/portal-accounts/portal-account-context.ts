import { cursorSigningKeys } from '#lib/crypto/key-sources';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { NotFound } from '#lib/errors';
import { clientUserInScope, reaches, type Scope } from '#lib/tenancy/scope';
import type { StorageQuotas } from '#lib/tenancy/storage-quotas';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import type { CredentialSealer } from './credentials.ts';
import type { PortalAccountStore } from './portal-account-store.ts';

/**
 * Items one page request may read before answering with a short, `partial` page: what a payer or
 * text filter (no key condition covers them) reads at most, whatever the organization's size.
 * Twice the largest page, so a page of 100 whose filter matches one account in two still fills.
 */
export const MAX_EVALUATED_PER_PAGE = 200;

export interface PortalAccountDependencies {
  store: PortalAccountStore;
  tenants: Pick<TenantStore, 'getClientUser'>;
  /** The portal accounts per organization quota: counted on create and move, given back on delete and move. */
  quotas: Pick<StorageQuotas, 'reservePortalAccount' | 'releasePortalAccount'>;
  /** Seals secrets; only create and replace need it (service.ts). */
  sealer?: CredentialSealer;
  cursorKeys?: () => Buffer[] | Promise<Buffer[]>;
  now?: () => Date;
  maxEvaluatedPerPage?: number;
}

/** The dependencies with their defaults filled in: what every portal-account use case is given first. */
export type PortalAccountContext = Required<PortalAccountDependencies>;

const noSealer: CredentialSealer = () => {
  throw new Error('This portal-account service was built without a sealer (see service.ts)');
};

export function contextOf(deps: PortalAccountDependencies): PortalAccountContext {
  return {
    ...deps,
    sealer: deps.sealer ?? noSealer,
    cursorKeys: deps.cursorKeys ?? cursorSigningKeys,
    now: deps.now ?? (() => new Date()),
    maxEvaluatedPerPage: deps.maxEvaluatedPerPage ?? MAX_EVALUATED_PER_PAGE,
  };
}

export async function organizationOf(ctx: PortalAccountContext, scope: Scope, clientUserId: string): Promise<string> {
  return (await clientUserInScope(ctx.tenants, scope, clientUserId)).organizationId;
}

/** Another organization's account is not found, for a key restricted to one. */
export async function load(ctx: PortalAccountContext, scope: Scope, externalId: string): Promise<StoredPortalAccount> {
  const account = await ctx.store.get(scope.clientId, externalId);
  if (!account || !reaches(scope, account.organizationId)) throw new NotFound(`Portal account ${externalId}`);
  return account;
}
