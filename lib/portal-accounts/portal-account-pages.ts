import { normalizeSearchText } from '#lib/entities/portal-account';
import { type CursorScope, encodeCursor, filterHashOf, type PageRequest, pageStart } from '#lib/pagination/cursor';
import type { Scope } from '#lib/tenancy/scope';
import { organizationOf, type PortalAccountContext } from './portal-account-context.ts';
import type { FilterRequest } from './portal-account-input.ts';
import { representationOf } from './portal-account-representation.ts';
import type { PortalAccountCriteria } from './portal-account-store.ts';

/** Listing and filtering an organization's accounts, a signed-cursor page at a time. */

const DEFAULT_PAGE_SIZE = 25;
const MAX_PAGE_SIZE = 100;
const PAGE_BOUNDS = { defaultPageSize: DEFAULT_PAGE_SIZE, maxPageSize: MAX_PAGE_SIZE };
/** What the cursors of these lists are signed for (docs/portal-accounts.md, "Listing, filtering and cursors"). */
const CURSOR_PURPOSE = 'portal-accounts-cursor/v1';

async function page(
  ctx: PortalAccountContext,
  scope: Scope,
  clientUserId: string,
  criteria: PortalAccountCriteria,
  request: PageRequest,
) {
  const { clientId } = scope;
  const organizationId = await organizationOf(ctx, scope, clientUserId);
  const cursorScope: CursorScope = { purpose: CURSOR_PURPOSE, bindings: [clientId, organizationId] };
  const filterHash = filterHashOf(criteria);
  const { pageSize, after } = pageStart(await ctx.cursorKeys(), cursorScope, filterHash, request, PAGE_BOUNDS);
  const result = await ctx.store.page({
    clientId,
    organizationId,
    criteria,
    ...(after !== undefined ? { after } : {}),
    limit: pageSize,
    maxEvaluated: ctx.maxEvaluatedPerPage,
  });
  return {
    items: result.items.map(representationOf),
    pageSize,
    nextCursor: result.next
      ? encodeCursor(await ctx.cursorKeys(), cursorScope, { after: result.next, filterHash, pageSize })
      : null,
    // True when the read bound, not the end of the matches, ended a short (even empty) page.
    partial: result.partial,
  };
}

/** GET …/{clientUserId}/list: the organization's accounts, paged. */
export function list(ctx: PortalAccountContext, scope: Scope, clientUserId: string, request: PageRequest) {
  return page(ctx, scope, clientUserId, {}, request);
}

/** POST …/filter. */
export function filter(
  ctx: PortalAccountContext,
  scope: Scope,
  { clientUserId, portalId, payerId, search, status, pageSize, cursor }: FilterRequest,
) {
  const criteria: PortalAccountCriteria = {
    ...(portalId !== undefined ? { portalId } : {}),
    ...(payerId !== undefined ? { payerId } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(search !== undefined ? { search: normalizeSearchText(search.trim()) } : {}),
  };
  return page(ctx, scope, clientUserId, criteria, {
    ...(pageSize !== undefined ? { pageSize } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
}
