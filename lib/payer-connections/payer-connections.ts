import type { PageRequest } from '#lib/pagination/cursor';
import type { Scope } from '#lib/tenancy/scope';
import { contextOf, load, type PayerConnectionDependencies } from './payer-connection-context.ts';
import type { NewPayerConnection, PayerConnectionInput } from './payer-connection-input.ts';
import { list } from './payer-connection-pages.ts';
import { create, remove, replace } from './payer-connection-writes.ts';

/**
 * Payer-connection use cases, independent of HTTP and storage (docs/payer-connections.md), with the
 * rules of portal accounts:
 * - The organization is always resolved from clientUserId within the caller's scope (404 if unknown).
 * - Scope (#lib/tenancy/scope): an organization-restricted key reaches only its organization's
 *   connections and client users; anything else is a 404, as if it did not exist. Only an unrestricted
 *   key can move a connection to another organization (PUT with another organization's clientUserId).
 * - A connection is to a payer of the operators' directory of payer APIs: another payer is a 422
 *   (`no_payer_api`).
 * - If-Match (ETag `"<version>"`) or a body `version` makes a write conditional: stale → 412.
 * - Logs carry ids and outcomes, never the client_id the payer issued.
 * The representation (payer-connection-representation.ts) needs the API's base URL: the handlers add it.
 */
export const payerConnectionService = (deps: PayerConnectionDependencies) => {
  const ctx = contextOf(deps);
  return {
    get: (scope: Scope, externalId: string) => load(ctx, scope, externalId),
    create: (scope: Scope, input: NewPayerConnection) => create(ctx, scope, input),
    replace: (scope: Scope, externalId: string, input: PayerConnectionInput, ifMatch?: string) =>
      replace(ctx, scope, externalId, input, ifMatch),
    remove: (scope: Scope, externalId: string, ifMatch?: string) => remove(ctx, scope, externalId, ifMatch),
    /** GET …/{clientUserId}/list: the organization's connections, paged. */
    list: (scope: Scope, clientUserId: string, request: PageRequest) => list(ctx, scope, clientUserId, request),
  };
};
