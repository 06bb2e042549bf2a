import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Invalid } from '#lib/errors';
import type { PortalAccountCriteria } from './portal-account-store.ts';

/**
 * Opaque, tamper-proof pagination cursors: `<payload>.<mac>`, both base64url.
 *   payload = JSON { v: 1, after: <last position>, f: <filter hash>, n: <page size> }
 *   mac     = HMAC-SHA-256(signing key, "portal-accounts-cursor/v1" ‖ clientId ‖ organizationId ‖ payload)
 * The MAC binds the cursor to the client and organization it was issued for, to the filter
 * (hash of the normalized criteria) and to the page size. Any change, or use by another tenant or
 * with another filter, is a 400. Keys come from lib/crypto/config.ts (first signs, all verify).
 */
export interface CursorScope {
  clientId: string;
  organizationId: string;
}

export interface CursorState {
  after: string;
  filterHash: string;
  pageSize: number;
}

export const MAX_CURSOR_LENGTH = 1024;
const DOMAIN = 'portal-accounts-cursor/v1';

/** A short, stable digest of the criteria (undefined fields ignored, order independent). */
export const filterHashOf = (criteria: PortalAccountCriteria): string => {
  const entries = Object.entries(criteria)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 22);
};

const macOf = (key: Buffer, scope: CursorScope, payload: string) =>
  createHmac('sha256', key).update([DOMAIN, scope.clientId, scope.organizationId, payload].join('\n')).digest();

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
