import type { ClientUserRecord } from '#lib/entities/tenancy';
import { NotFound } from '#lib/errors';
import type { TenantStore } from './tenant-store.ts';

/**
 * What a caller may reach: its client and, when its API key is restricted to one, a single
 * organization of that client (docs/security.md, "Organizations inside a client"). Built at the edge
 * from the authorizer's context (lib/http/endpoint.ts, scopeOf), never from the body or path.
 */
export interface Scope {
  readonly clientId: string;
  readonly organizationId?: string;
}

/** Whether an organization's data is within reach: always, unless the key is restricted to another. */
export const reaches = (scope: Scope, organizationId: string): boolean =>
  scope.organizationId === undefined || scope.organizationId === organizationId;

/**
 * The client user, if within reach. Another organization's user is a 404 like an unknown one, so a
 * restricted key cannot learn which ids exist elsewhere in its client.
 */
export const clientUserInScope = async (
  tenants: Pick<TenantStore, 'getClientUser'>,
  scope: Scope,
  clientUserId: string,
): Promise<ClientUserRecord> => {
  const user = await tenants.getClientUser(scope.clientId, clientUserId);
  if (!user || !reaches(scope, user.organizationId)) throw new NotFound(`Client user ${clientUserId}`);
  return user;
};
