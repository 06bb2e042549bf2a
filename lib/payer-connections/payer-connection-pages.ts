import { type CursorScope, encodeCursor, filterHashOf, type PageRequest, pageStart } from '#lib/pagination/cursor';
import type { Scope } from '#lib/tenancy/scope';
import { organizationOf, type PayerConnectionContext } from './payer-connection-context.ts';

/** Listing an organization's connections, a signed-cursor page at a time (as portal accounts are listed). */

const PAGE_BOUNDS = { defaultPageSize: 25, maxPageSize: 100 };
/** What the cursors of this list are signed for (docs/payer-connections.md, "Listing"). */
const CURSOR_PURPOSE = 'payer-connections-cursor/v1';
/** No filter: every cursor of the list carries the same hash. */
const NO_FILTER = filterHashOf({});

/** GET …/{clientUserId}/list: the organization's connections, oldest first. */
export async function list(ctx: PayerConnectionContext, scope: Scope, clientUserId: string, request: PageRequest) {
  const { clientId } = scope;
  const organizationId = await organizationOf(ctx, scope, clientUserId);
  const cursorScope: CursorScope = { purpose: CURSOR_PURPOSE, bindings: [clientId, organizationId] };
  const { pageSize, after } = pageStart(await ctx.cursorKeys(), cursorScope, NO_FILTER, request, PAGE_BOUNDS);
  const page = await ctx.store.page({
    clientId,
    organizationId,
    ...(after !== undefined ? { after } : {}),
    limit: pageSize,
  });
  return {
    items: page.items,
    pageSize,
    nextCursor: page.next
      ? encodeCursor(await ctx.cursorKeys(), cursorScope, { after: page.next, filterHash: NO_FILTER, pageSize })
      : null,
  };
}
