import type { AuthorizationState } from '#lib/events/service-event';

/**
 * Port: a request's authorization history (docs/data-model.md, AuthorizationChange): one entry per
 * change of status, number or decision date, in the request's item collection, newest first. Entries
 * are written with the change itself (RequestStore.setAuthorization), never on their own.
 */

/** What changed it: an automation run, or an API call (its request id, as the audit trail names it). */
export type ChangedBy = { kind: 'run'; runId: string } | { kind: 'api'; requestId: string };

export interface AuthorizationChange {
  clientId: string;
  externalId: string;
  /** A UUIDv7: with changedAt, the entry's place in the history. */
  changeId: string;
  changedAt: string;
  previous: AuthorizationState;
  current: AuthorizationState;
  changedBy: ChangedBy;
  version: number;
  createdAt: string;
  updatedAt: string;
}

interface HistoryPage {
  entries: AuthorizationChange[];
  /** The last entry's position when more may follow: where the next page starts. */
  next?: string;
}

export interface AuthorizationHistoryStore {
  /** At most `limit` entries, newest first, after the position `after` (a previous page's `next`). */
  page(clientId: string, externalId: string, options: { after?: string; limit: number }): Promise<HistoryPage>;
}
