import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Invalid } from '#lib/errors';
import { problemOf } from '#lib/http/domain-errors';
import { decodeCursor, encodeCursor, filterHashOf, pageStart } from '#lib/pagination/cursor';

const key = randomBytes(32);
const scope = { purpose: 'portal-accounts-cursor/v1', bindings: ['client-a', 'org-1'] };
const state = {
  after: '2026-01-01T00:00:00.000Z#acc-1',
  filterHash: filterHashOf({ portalId: 'sandbox' }),
  pageSize: 10,
};

const expect400 = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(Invalid);
    expect(problemOf(error as Invalid).status).toBe(400);
    return;
  }
  throw new Error('expected a 400');
};

describe('pagination cursor', () => {
  it('round-trips and is URL-safe', () => {
    const cursor = encodeCursor([key], scope, state);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor([key], scope, cursor)).toEqual(state);
  });

  it('verifies with any key of a rotation list; signs with the first', () => {
    const next = randomBytes(32);
    const old = encodeCursor([key], scope, state);
    expect(decodeCursor([next, key], scope, old)).toEqual(state);
    expect400(() => decodeCursor([key], scope, encodeCursor([next, key], scope, state)));
  });

  it('refuses a tampered payload, a tampered MAC, another key and junk', () => {
    const cursor = encodeCursor([key], scope, state);
    const [payload, mac] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ v: 1, after: 'zzz', f: state.filterHash, n: 100 })).toString(
      'base64url',
    );
    expect400(() => decodeCursor([key], scope, `${forged}.${mac}`));
    expect400(() => decodeCursor([key], scope, `${payload}.${mac.slice(0, -2)}AA`));
    expect400(() => decodeCursor([randomBytes(32)], scope, cursor));
    for (const junk of ['', '.', 'abc', `${payload}.${mac}.x`, 'x'.repeat(2000)]) {
      expect400(() => decodeCursor([key], scope, junk));
    }
  });

  it('is bound to its list and to what it lists (the client, the organization or the request)', () => {
    const cursor = encodeCursor([key], scope, state);
    expect400(() => decodeCursor([key], { ...scope, bindings: ['client-b', 'org-1'] }, cursor));
    expect400(() => decodeCursor([key], { ...scope, bindings: ['client-a', 'org-2'] }, cursor));
    expect400(() => decodeCursor([key], { ...scope, bindings: ['client-a', 'org-1', 'more'] }, cursor));
    expect400(() => decodeCursor([key], { ...scope, purpose: 'authorization-history-cursor/v1' }, cursor));
  });

  it('keeps the bytes portal-account cursors had before it was shared: theirs still verify', () => {
    // HMAC over "portal-accounts-cursor/v1\nclient-a\norg-1\n<payload>", as lib/portal-accounts/cursor.ts signed.
    const cursor = encodeCursor([key], scope, state);
    const [payload, mac] = cursor.split('.') as [string, string];
    const expected = createHmac('sha256', key)
      .update(['portal-accounts-cursor/v1', 'client-a', 'org-1', payload].join('\n'))
      .digest('base64url');
    expect(mac).toBe(expected);
  });

  it("starts a page where the cursor says, with the cursor's page size; refuses another filter or size", () => {
    const bounds = { defaultPageSize: 25, maxPageSize: 100 };
    expect(pageStart([key], scope, state.filterHash, {}, bounds)).toEqual({ pageSize: 25 });
    const cursor = encodeCursor([key], scope, state);
    expect(pageStart([key], scope, state.filterHash, { cursor }, bounds)).toEqual({ pageSize: 10, after: state.after });
    expect(pageStart([key], scope, state.filterHash, { cursor, pageSize: 10 }, bounds).after).toBe(state.after);
    expect400(() => pageStart([key], scope, state.filterHash, { cursor, pageSize: 11 }, bounds));
    expect400(() => pageStart([key], scope, filterHashOf({ portalId: 'other' }), { cursor }, bounds));
    expect400(() => pageStart([key], scope, state.filterHash, { pageSize: 101 }, bounds));
    expect400(() => pageStart([key], scope, state.filterHash, { pageSize: 0 }, bounds));
  });

  it('hashes filters independently of key order and undefined fields', () => {
    expect(filterHashOf({ portalId: 'a', payerId: 'b' })).toBe(
      filterHashOf({ payerId: 'b', portalId: 'a', search: undefined }),
    );
    expect(filterHashOf({ portalId: 'a' })).not.toBe(filterHashOf({ portalId: 'b' }));
    expect(filterHashOf({})).not.toBe(filterHashOf({ search: 'x' }));
  });
});
