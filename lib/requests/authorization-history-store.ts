import type { AuthorizationChange } from '#lib/entities/authorization-history';

/**
 * Port: a request's authorization history (docs/data-model.md, AuthorizationChange): one entry per
 * change of status, number or decision date, in the request's item collection, newest first. Entries
 * are written with the change itself (RequestStore.setAuthorization), never on their own.
 */

interface HistoryPage {
  entries: AuthorizationChange[];
  /** The last entry's position when more may follow: where the next page starts. */
  next?: string;
}

export interface AuthorizationHistoryStore {
  /** At most `limit` entries, newest first, after the position `after` (a previous page's `next`). */
  page(clientId: string, externalId: string, options: { after?: string; limit: number }): Promise<HistoryPage>;
}
