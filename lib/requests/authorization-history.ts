import type { AuthorizationChange, DecisionReasons } from '#lib/entities/authorization-history';
import type { InformationRequested } from '#lib/entities/request';
import { NotFound } from '#lib/errors';
import { type CursorScope, encodeCursor, filterHashOf, type PageRequest, pageStart } from '#lib/pagination/cursor';
import { reaches, type Scope } from '#lib/tenancy/scope';
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

/** Who changed it, as a reader sees it: a run's id only where the reader may reach the run's organization. */
export type ChangedByView =
  | { kind: 'run'; runId: string | null }
  | { kind: 'api'; requestId: string }
  | { kind: 'deadline'; decisionDueAt: string };

/** An entry as clients read it (the history endpoint, the scraper session): ids, statuses and dates only. */
export type AuthorizationHistoryEntry = Pick<AuthorizationChange, 'changeId' | 'changedAt' | 'previous' | 'current'> & {
  changedBy: ChangedByView;
  informationRequested: InformationRequested | null;
} & DecisionReasons;

/**
 * The run's id where `scope` reaches the run's organization; null otherwise. The change itself stays in
 * the history: the request, and so its authorization, belongs to the whole client. An entry that does not
 * record the run's organization (written before runs carried it) shows its run only to unrestricted keys.
 */
const changedByViewOf = (changedBy: AuthorizationChange['changedBy'], scope: Scope): ChangedByView => {
  if (changedBy.kind === 'api') return { kind: 'api', requestId: changedBy.requestId };
  if (changedBy.kind === 'deadline') return { kind: 'deadline', decisionDueAt: changedBy.decisionDueAt };
  const visible =
    scope.organizationId === undefined ||
    (changedBy.organizationId !== undefined && reaches(scope, changedBy.organizationId));
  return { kind: 'run', runId: visible ? changedBy.runId : null };
};

export const historyEntryOf = (entry: AuthorizationChange, scope: Scope): AuthorizationHistoryEntry => ({
  changeId: entry.changeId,
  changedAt: entry.changedAt,
  previous: entry.previous,
  current: entry.current,
  changedBy: changedByViewOf(entry.changedBy, scope),
  // Why a denial or partial approval was made; entries of other changes, and older ones, have none.
  items: entry.decision?.items ?? [],
  reasons: entry.decision?.reasons ?? [],
  // What a new request for more information asked; null on every other entry.
  informationRequested: entry.informationRequested ?? null,
});

export interface AuthorizationHistoryDependencies {
  requests: Pick<RequestStore, 'get'>;
  history: AuthorizationHistoryStore;
  cursorKeys: () => Buffer[] | Promise<Buffer[]>;
}

export const authorizationHistoryService = ({ requests, history, cursorKeys }: AuthorizationHistoryDependencies) => ({
  /** A page of the request's history as `scope` may see it (changedByViewOf). */
  page: async (scope: Scope, externalId: string, request: PageRequest) => {
    const { clientId } = scope;
    if (!(await requests.get(clientId, externalId))) throw new NotFound(`Request ${externalId}`);
    // Bound to the request: a cursor of another request's (or another client's) history is a 400.
    const cursorScope: CursorScope = { purpose: 'authorization-history-cursor/v1', bindings: [clientId, externalId] };
    const { pageSize, after } = pageStart(await cursorKeys(), cursorScope, NO_FILTER, request, BOUNDS);
    const page = await history.page(clientId, externalId, {
      ...(after !== undefined ? { after } : {}),
      limit: pageSize,
    });
    return {
      items: page.entries.map((entry) => historyEntryOf(entry, scope)),
      pageSize,
      nextCursor: page.next
        ? encodeCursor(await cursorKeys(), cursorScope, { after: page.next, filterHash: NO_FILTER, pageSize })
        : null,
    };
  },
});

export type AuthorizationHistoryPage = Awaited<ReturnType<ReturnType<typeof authorizationHistoryService>['page']>>;
