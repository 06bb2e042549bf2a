import { cursorSigningKeys } from '#lib/crypto/key-sources';
import type { StoredPayerConnection } from '#lib/entities/payer-connection';
import { NotFound } from '#lib/errors';
import type { PayerEndpointStore } from '#lib/payer-endpoints/payer-endpoint-store';
import { clientUserInScope, reaches, type Scope } from '#lib/tenancy/scope';
import type { StorageQuotas } from '#lib/tenancy/storage-quotas';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import type { PayerConnectionStore } from './payer-connection-store.ts';

export interface PayerConnectionDependencies {
  store: PayerConnectionStore;
  /** The operators' directory: a connection is to a payer that has an API there. */
  endpoints: Pick<PayerEndpointStore, 'get'>;
  tenants: Pick<TenantStore, 'getClientUser'>;
  /** The payer connections per organization quota: counted on create and move, given back on delete and move. */
  quotas: Pick<StorageQuotas, 'reservePayerConnection' | 'releasePayerConnection'>;
  cursorKeys?: () => Buffer[] | Promise<Buffer[]>;
  now?: () => Date;
}

/** The dependencies with their defaults filled in: what every payer-connection use case is given first. */
export type PayerConnectionContext = Required<PayerConnectionDependencies>;

export const contextOf = (deps: PayerConnectionDependencies): PayerConnectionContext => ({
  ...deps,
  cursorKeys: deps.cursorKeys ?? cursorSigningKeys,
  now: deps.now ?? (() => new Date()),
});

export async function organizationOf(ctx: PayerConnectionContext, scope: Scope, clientUserId: string): Promise<string> {
  return (await clientUserInScope(ctx.tenants, scope, clientUserId)).organizationId;
}

/** Another organization's connection is not found, for a key restricted to one. */
export async function load(
  ctx: PayerConnectionContext,
  scope: Scope,
  externalId: string,
): Promise<StoredPayerConnection> {
  const connection = await ctx.store.get(scope.clientId, externalId);
  if (!connection || !reaches(scope, connection.organizationId)) throw new NotFound(`Payer connection ${externalId}`);
  return connection;
}
