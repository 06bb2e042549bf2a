import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Invalid } from '#lib/errors';

/**
 * Opaque, tamper-proof pagination cursors, shared by every paged list (portal accounts, a request's
 * authorization history): `<payload>.<mac>`, both base64url.
 *   payload = JSON { v: 1, after: <last position>, f: <filter hash>, n: <page size> }
 *   mac     = HMAC-SHA-256(signing key, purpose ‖ binding… ‖ payload), joined by newlines
 * The purpose names the list (`portal-accounts-cursor/v1`), the bindings what it lists (client and
 * organization; client and request), so a cursor is valid only for the list, tenant, filter (hash of
 * the normalized criteria) and page size it was issued for: any change or other use is a 400. Keys
 * come from lib/crypto/key-sources.ts (the first signs, all verify).
 */
export interface CursorScope {
  /** Which list, with a version: `portal-accounts-cursor/v1`. */
  purpose: string;
  /** What the list is of, tenant first: `[clientId, organizationId]`. */
  bindings: readonly string[];
}

export interface CursorState {
  after: string;
  filterHash: string;
  pageSize: number;
}

const MAX_CURSOR_LENGTH = 1024;

/** A short, stable digest of the criteria (undefined fields ignored, order independent). */
export const filterHashOf = (criteria: object): string => {
  const entries = Object.entries(criteria)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 22);
};

const macOf = (key: Buffer, scope: CursorScope, payload: string) =>
  createHmac('sha256', key)
    .update([scope.purpose, ...scope.bindings, payload].join('\n'))
    .digest();

export const encodeCursor = (keys: Buffer[], scope: CursorScope, state: CursorState): string => {
  const payload = Buffer.from(
    JSON.stringify({ v: 1, after: state.after, f: state.filterHash, n: state.pageSize }),
  ).toString('base64url');
  return `${payload}.${macOf(keys[0]!, scope, payload).toString('base64url')}`;
};

const invalid = () =>
  new Invalid('The cursor is not valid for this request: pass back nextCursor unchanged, with the same filter.', {
    parameter: 'cursor',
  });

export const decodeCursor = (keys: Buffer[], scope: CursorScope, cursor: string): CursorState => {
  if (cursor.length > MAX_CURSOR_LENGTH) throw invalid();
  const [payload, mac, ...rest] = cursor.split('.');
  if (!payload || !mac || rest.length > 0) throw invalid();
  const presented = Buffer.from(mac, 'base64url');
  const authentic = keys.some((key) => {
    const expected = macOf(key, scope, payload);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
  if (!authentic) throw invalid();
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const { v, after, f, n } = (state ?? {}) as Record<string, unknown>;
  if (v !== 1 || typeof after !== 'string' || typeof f !== 'string' || !Number.isInteger(n)) throw invalid();
  return { after, filterHash: f, pageSize: n as number };
};

/** A page as a client asks for it: `?pageSize=&cursor=` (or the same members of a filter body). */
export interface PageRequest {
  pageSize?: number;
  cursor?: string;
}

export interface PageBounds {
  defaultPageSize: number;
  maxPageSize: number;
}

/**
 * Where a requested page starts (`after`: undefined for the first) and how long it is. With a cursor,
 * the filter must be the one it was issued for, and `pageSize` omitted or the same: both 400 otherwise.
 */
export const pageStart = (
  keys: Buffer[],
  scope: CursorScope,
  filterHash: string,
  request: PageRequest,
  { defaultPageSize, maxPageSize }: PageBounds,
): { pageSize: number; after?: string } => {
  let pageSize = request.pageSize ?? defaultPageSize;
  let after: string | undefined;
  if (request.cursor !== undefined) {
    const state = decodeCursor(keys, scope, request.cursor);
    if (state.filterHash !== filterHash) {
      throw new Invalid('The cursor was issued for a different filter: repeat the filter of the first page.', {
        parameter: 'cursor',
      });
    }
    if (request.pageSize !== undefined && request.pageSize !== state.pageSize) {
      throw new Invalid(`The cursor was issued for pageSize ${state.pageSize}: omit pageSize or pass the same.`, {
        parameter: 'pageSize',
      });
    }
    pageSize = state.pageSize;
    after = state.after;
  }
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize) {
    throw new Invalid(`pageSize must be an integer from 1 to ${maxPageSize}.`, { parameter: 'pageSize' });
  }
  return after === undefined ? { pageSize } : { pageSize, after };
};
