import { beforeAll, describe, expect, it } from 'vitest';
import { createDynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { portalAccountService } from '#lib/portal-accounts/portal-accounts';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { call, newTenant, uniqueId } from '#test/support/api';

const v11 = '/api/external/v1.1/Portals/accounts';
type Tenant = Awaited<ReturnType<typeof newTenant>>;

const create = async (tenant: Tenant, overrides: Record<string, unknown> = {}) => {
  const res = await call('POST', v11, {
    apiKey: tenant.apiKey,
    body: {
      externalId: uniqueId('pacc'),
      clientUserId: tenant.clientUserId,
      portalId: 'sandbox',
      username: `user-${uniqueId()}`,
      password: 'pw',
      ...overrides,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
};

const filter = (tenant: Tenant, body: Record<string, unknown>) =>
  call('POST', `${v11}/filter`, { apiKey: tenant.apiKey, body: { clientUserId: tenant.clientUserId, ...body } });

/** Every page of a filter, following nextCursor; `between` runs concurrently with each page fetch. */
const allPages = async (
  tenant: Tenant,
  body: Record<string, unknown>,
  between?: (page: number) => Promise<unknown>,
) => {
  const pages: Record<string, any>[][] = [];
  let cursor: string | null = null;
  do {
    const [res]: [Awaited<ReturnType<typeof filter>>, unknown] = await Promise.all([
      filter(tenant, { ...body, ...(cursor ? { cursor } : {}) }),
      between?.(pages.length),
    ]);
    expect(res.status, res.text).toBe(200);
    pages.push(res.body.items);
    cursor = res.body.nextCursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor);
  return pages;
};

const order = (a: Record<string, any>) => `${a.createdAt}#${a.externalId}`;

describe('filter', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await newTenant('portal-accounts-filter');
    await create(t, { externalId: 'f-1', portalId: 'availity', payerIds: ['P1', 'P2'], displayName: 'North Clinic' });
    await create(t, { externalId: 'f-2', portalId: 'availity', payerIds: ['P2'], username: 'MARY.SMITH' });
    await create(t, { externalId: 'f-3', portalId: 'navinet', payerIds: ['P1'], displayName: 'South clinic' });
    await create(t, { externalId: 'f-4', portalId: 'sandbox', status: 'disabled', username: 'mary-jones' });
  });
  const ids = (res: { body: any }) => res.body.items.map((a: any) => a.externalId);

  it('filters by portal, payer, status and case-insensitive text in display name or username', async () => {
    expect(ids(await filter(t, {}))).toEqual(['f-1', 'f-2', 'f-3', 'f-4']);
    expect(ids(await filter(t, { portalId: 'availity' }))).toEqual(['f-1', 'f-2']);
    expect(ids(await filter(t, { payerId: 'P1' }))).toEqual(['f-1', 'f-3']);
    expect(ids(await filter(t, { portalId: 'availity', payerId: 'P1' }))).toEqual(['f-1']);
    expect(ids(await filter(t, { status: 'disabled' }))).toEqual(['f-4']);
    expect(ids(await filter(t, { search: 'CLINIC' }))).toEqual(['f-1', 'f-3']);
    expect(ids(await filter(t, { search: 'mary' }))).toEqual(['f-2', 'f-4']);
    expect(ids(await filter(t, { search: '  smith ' }))).toEqual(['f-2']);
    expect(ids(await filter(t, { payerId: 'P9' }))).toEqual([]);
  });

  it('answers with the page size and a null nextCursor on the last page', async () => {
    const res = await filter(t, {});
    expect(res.body).toMatchObject({ pageSize: 25, nextCursor: null });
  });

  it('refuses an unknown portal, a page size out of bounds and unknown fields with the Validation result', async () => {
    const res = await filter(t, { portalId: 'nope', pageSize: 101, sortBy: 'x' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ succeeded: false, type: 'none' });
    expect(res.body.errors).toEqual([
      "/: AdditionalProperties error. must NOT have additional property 'sortBy'.",
      '/portalId: Enum error for value "nope". Message: must be equal to one of the allowed values.',
      '/pageSize: Maximum error for value "101". Message: must be <= 100.',
    ]);
    expect((await filter(t, { pageSize: 0 })).status).toBe(400);
    expect((await filter(t, { search: '   ' })).status).toBe(400);
  });
});

describe('cursor pagination', () => {
  it('pages without duplicates or gaps while accounts are added concurrently', async () => {
    const t = await newTenant('portal-accounts-paging');
    const initial: Record<string, any>[] = [];
    // Matching (sandbox) and non-matching (availity) accounts interleaved.
    for (let i = 0; i < 14; i++) initial.push(await create(t, { portalId: i % 3 === 2 ? 'availity' : 'sandbox' }));
    const initialMatching = initial.filter((a) => a.portalId === 'sandbox').map((a) => a.externalId);
    const inserted: string[] = [];
    const insertSome = async (page: number) => {
      if (page > 3) return;
      const batch = await Promise.all(
        [0, 1, 2].map((i) =>
          create(t, { portalId: i === 1 ? 'availity' : 'sandbox', displayName: `new ${page}.${i}` }),
        ),
      );
      inserted.push(...batch.filter((a) => a.portalId === 'sandbox').map((a) => a.externalId));
    };

    const pages = await allPages(t, { portalId: 'sandbox', pageSize: 3 }, insertSome);
    const seen = pages.flat();
    const seenIds = seen.map((a) => a.externalId);

    expect(new Set(seenIds).size).toBe(seenIds.length); // no duplicates
    for (const id of initialMatching) expect(seenIds).toContain(id); // no gaps
    expect(seen.every((a) => a.portalId === 'sandbox')).toBe(true);
    expect(seen.map(order)).toEqual([...seen.map(order)].sort()); // stable order
    expect(pages.slice(0, -1).every((page) => page.length === 3)).toBe(true); // full pages despite the filter
    // Accounts added while paging sort after what was already read: they show up in later pages.
    expect(inserted.filter((id) => seenIds.includes(id)).length).toBeGreaterThan(0);

    // Ground truth once writes have stopped: what was seen is exactly the final list, in its order.
    const final = await allPages(t, { portalId: 'sandbox', pageSize: 100 });
    const finalIds = final.flat().map((a) => a.externalId);
    expect(finalIds.filter((id) => seenIds.includes(id))).toEqual(seenIds);
    const missed = finalIds.filter((id) => !seenIds.includes(id));
    for (const id of missed) expect(inserted).toContain(id); // only a concurrent insert can be missed
  });

  it('refuses a tampered cursor, another filter’s, another page size’s, another organization’s and another client’s', async () => {
    const t = await newTenant('portal-accounts-cursor');
    for (let i = 0; i < 3; i++) await create(t);
    const first = await filter(t, { pageSize: 1 });
    const cursor: string = first.body.nextCursor;
    expect(cursor).toEqual(expect.any(String));
    expect((await filter(t, { cursor })).status).toBe(200);

    const [payload, mac] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...decoded, n: 100 })).toString('base64url');
    const flipped = `${payload.slice(0, -1)}${payload.endsWith('A') ? 'B' : 'A'}.${mac}`;
    for (const bad of [`${forged}.${mac}`, flipped, `${payload}.${mac.slice(1)}`, 'garbage', `${cursor}x`]) {
      const res = await filter(t, { cursor: bad });
      expect(res.status, bad).toBe(400);
      expect(res.body).toMatchObject({ status: 400, parameter: 'cursor' });
    }

    const otherFilter = await filter(t, { cursor, portalId: 'sandbox' });
    expect(otherFilter.status).toBe(400);
    expect(otherFilter.body.detail).toMatch(/different filter/);
    const otherSize = await filter(t, { cursor, pageSize: 2 });
    expect(otherSize.status).toBe(400);
    expect(otherSize.body.parameter).toBe('pageSize');

    const { organizationId: otherOrg } = await t.admin.createOrganization(t.clientId, 'Other org');
    const otherUser = `other-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, otherOrg, otherUser);
    expect((await filter(t, { cursor, clientUserId: otherUser })).status).toBe(400);

    const stranger = await newTenant('portal-accounts-cursor-stranger');
    expect((await filter(stranger, { cursor })).status).toBe(400);

    // The list endpoint takes the same cursors (query string) for the unfiltered view.
    const listed = await call('GET', `${v11}/${t.clientUserId}/list?cursor=${encodeURIComponent(cursor)}`, {
      apiKey: t.apiKey,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(1);
    const tamperedList = await call('GET', `${v11}/${t.clientUserId}/list?cursor=${encodeURIComponent(flipped)}`, {
      apiKey: t.apiKey,
    });
    expect(tamperedList.status).toBe(400);
  });
});

describe('paging a sparse filter (DynamoDB applies Limit before FilterExpression)', () => {
  let t: Tenant;
  const rare: string[] = [];
  beforeAll(async () => {
    t = await newTenant('portal-accounts-sparse');
    // Free text of 1–2 characters is the one criterion no index covers: a FilterExpression, applied
    // after Limit (3 characters or more read the search index). The usernames hold no `ra`.
    for (let i = 0; i < 20; i++) {
      const account = await create(t, { displayName: i % 4 === 3 ? `Rare ${i}` : `Common ${i}`, username: `u${i}` });
      if (i % 4 === 3) rare.push(account.externalId);
    }
  });

  const service = (options: { filteredBatch: number; maxEvaluatedPerPage?: number }) =>
    portalAccountService({
      store: createDynamoPortalAccountStore({ filteredBatch: options.filteredBatch }),
      tenants: dynamoTenantStore,
      quotas: dynamoStorageQuotas,
      ...(options.maxEvaluatedPerPage ? { maxEvaluatedPerPage: options.maxEvaluatedPerPage } : {}),
    });

  const pagesOf = async (accounts: ReturnType<typeof service>, pageSize: number) => {
    const pages: string[][] = [];
    const partial: boolean[] = [];
    let cursor: string | undefined;
    do {
      const page = await accounts.filter(
        { clientId: t.clientId },
        {
          clientUserId: t.clientUserId,
          search: 'RA',
          pageSize,
          ...(cursor ? { cursor } : {}),
        },
      );
      pages.push(page.items.map((a) => a.externalId));
      partial.push(page.partial);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && pages.length < 50);
    return { pages, partial };
  };

  it('keeps querying until the page is full, even when each query reads only 3 items', async () => {
    const { pages } = await pagesOf(service({ filteredBatch: 3 }), 2);
    expect(pages).toEqual([rare.slice(0, 2), rare.slice(2, 4), rare.slice(4)]);
  });

  it('returns a short page with a cursor when the evaluation budget is spent, says so, and still misses nothing', async () => {
    const { pages, partial } = await pagesOf(service({ filteredBatch: 3, maxEvaluatedPerPage: 3 }), 2);
    expect(pages.flat()).toEqual(rare);
    // Each short page but the last was cut by the budget and says so; a full or last page does not.
    pages.forEach((page, i) => {
      const last = i === pages.length - 1;
      expect({ page: i, partial: partial[i] }).toEqual({ page: i, partial: page.length < 2 && !last });
    });
    expect(partial.some(Boolean)).toBe(true);
    expect(pages.slice(0, -1).some((page) => page.length === 0)).toBe(true); // even empty, with a cursor
  });
});
