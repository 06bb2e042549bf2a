import type { AuthorizationChange } from '#lib/entities/authorization-history';
import { NotFound } from '#lib/errors';
import { type CursorScope, encodeCursor, filterHashOf, type PageRequest, pageStart } from '#lib/pagination/cursor';
import type { AuthorizationHistoryStore } from './authorization-history-store.ts';
import type { RequestStore } from './request-store.ts';

/**
 * A request's authorization history (GET …/Requests/{externalId}/authorization/history): every change
 * of its status, number or decision date, newest first, in pages of `pageSize` (1–100, default 25)
 * with signed cursors (lib/pagination/cursor.ts). Another client's request is not found.
 */
const DEFAULT_HISTORY_PAGE_SIZE = 25;
export const MAX_HISTORY_PAGE_SIZE = 100;
const BOUNDS = { defaultPageSize: DEFAULT_HISTORY_PAGE_SIZE, maxPageSize: MAX_HISTORY_PAGE_SIZE };
/** A history has no filter: every cursor carries the same hash. */
const NO_FILTER = filterHashOf({});

/** An entry as clients read it (the history endpoint, the scraper session): ids, statuses and dates only. */
export type AuthorizationHistoryEntry = Pick<
  AuthorizationChange,
  'changeId' | 'changedAt' | 'previous' | 'current' | 'changedBy'
>;

export const historyEntryOf = (entry: AuthorizationChange): AuthorizationHistoryEntry => ({
  changeId: entry.changeId,
  changedAt: entry.changedAt,
  previous: entry.previous,
  current: entry.current,
  changedBy: entry.changedBy,
});

export interface AuthorizationHistoryDependencies {
  requests: Pick<RequestStore, 'get'>;
  history: AuthorizationHistoryStore;
  cursorKeys: () => Buffer[] | Promise<Buffer[]>;
}

export const authorizationHistoryService = ({ requests, history, cursorKeys }: AuthorizationHistoryDependencies) => ({
  page: async (clientId: string, externalId: string, request: PageRequest) => {
    if (!(await requests.get(clientId, externalId))) throw new NotFound(`Request ${externalId}`);
    // Bound to the request: a cursor of another request's (or another client's) history is a 400.
    const scope: CursorScope = { purpose: 'authorization-history-cursor/v1', bindings: [clientId, externalId] };
    const { pageSize, after } = pageStart(await cursorKeys(), scope, NO_FILTER, request, BOUNDS);
    const page = await history.page(clientId, externalId, {
      ...(after !== undefined ? { after } : {}),
      limit: pageSize,
    });
    return {
      items: page.entries.map(historyEntryOf),
      pageSize,
      nextCursor: page.next
        ? encodeCursor(await cursorKeys(), scope, { after: page.next, filterHash: NO_FILTER, pageSize })
        : null,
    };
  },
});

export type AuthorizationHistoryPage = Awaited<ReturnType<ReturnType<typeof authorizationHistoryService>['page']>>;
