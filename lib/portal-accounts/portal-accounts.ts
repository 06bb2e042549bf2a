import type { PageRequest } from '#lib/pagination/cursor';
import type { Scope } from '#lib/tenancy/scope';
import { contextOf, load, type PortalAccountDependencies } from './portal-account-context.ts';
import type { FilterRequest, NewPortalAccount, PortalAccountInput } from './portal-account-input.ts';
import { filter, list } from './portal-account-pages.ts';
import { create, remove, replace } from './portal-account-writes.ts';

/**
 * Portal-account use cases, independent of HTTP and storage (docs/portal-accounts.md), each in the
 * module of its job: writes (portal-account-writes.ts), pages (portal-account-pages.ts).
 * - The organization is always resolved from clientUserId within the caller's scope (404 if unknown).
 * - Scope (#lib/tenancy/scope): an organization-restricted key reaches only its organization's
 *   accounts and client users; anything else is a 404, as if it did not exist. Only an unrestricted
 *   key can move an account to another organization (PUT with another organization's clientUserId).
 * - Secrets are sealed before they reach the store and never leave it: representations say only
 *   whether each is set and when it changed. Logs carry ids and outcomes, never usernames or secrets.
 * - PUT replaces every non-secret field; an omitted secret is kept, `totpSecret: null` removes it.
 * - If-Match (ETag `"<version>"`) or a body `version` makes a write conditional: stale → 412.
 */
export const portalAccountService = (deps: PortalAccountDependencies) => {
  const ctx = contextOf(deps);
  return {
    get: (scope: Scope, externalId: string) => load(ctx, scope, externalId),
    create: (scope: Scope, input: NewPortalAccount) => create(ctx, scope, input),
    replace: (scope: Scope, externalId: string, input: PortalAccountInput, ifMatch?: string) =>
      replace(ctx, scope, externalId, input, ifMatch),
    remove: (scope: Scope, externalId: string, ifMatch?: string) => remove(ctx, scope, externalId, ifMatch),
    /** GET …/{clientUserId}/list: the organization's accounts, paged. */
    list: (scope: Scope, clientUserId: string, request: PageRequest) => list(ctx, scope, clientUserId, request),
    /** POST …/filter. */
    filter: (scope: Scope, request: FilterRequest) => filter(ctx, scope, request),
  };
};
