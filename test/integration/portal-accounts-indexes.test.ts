import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { portalAccountEntity } from '#lib/entities/portal-account';
import {
  backfillPortalAccountIndexes,
  dynamoPortalAccountStore,
} from '#lib/portal-accounts/dynamo-portal-account-store';
import { MAX_EVALUATED_PER_PAGE } from '#lib/portal-accounts/portal-account-context';
import type { FilterRequest } from '#lib/portal-accounts/portal-account-input';
import { portalAccountsWithSecrets } from '#lib/portal-accounts/service-with-secrets';
import { TABLE_KEY } from '#lib/table';
import { call, newTenant, uniqueId } from '#test/support/api';
import { recordDynamoCalls } from '#test/support/dynamo-recorder';
import { portalAccountReplacementOf, storedPortalAccount } from '#test/support/fixtures';
import { seedPortalAccounts } from '#test/support/seed-portal-accounts';

/*
 * Filters as key conditions (docs/data-model.md, "Portal account filters"): which index each filter
 * reads, what it reads at 1,000 accounts (counted: items and round trips, not time), the payer index
 * entries through create, replace, move and delete, and the backfill of accounts written before.
 */
const v11 = '/api/external/v1.1/Portals/accounts';
type Tenant = Awaited<ReturnType<typeof newTenant>>;

const accounts = portalAccountsWithSecrets;
const filter = (t: Tenant, criteria: Omit<FilterRequest, 'clientUserId'>) =>
  accounts.filter({ clientId: t.clientId }, { clientUserId: t.clientUserId, ...criteria });
const idsOf = (page: { items: Array<{ externalId: string }> }) => page.items.map((a) => a.externalId);

/** Every page of a filter; the pages and whether each was partial. */
const allPages = async (t: Tenant, criteria: Omit<FilterRequest, 'clientUserId'>) => {
  const pages: Array<{ ids: string[]; partial: boolean }> = [];
  let cursor: string | undefined;
  do {
    const page = await filter(t, { ...criteria, ...(cursor ? { cursor } : {}) });
    pages.push({ ids: idsOf(page), partial: page.partial });
    cursor = page.nextCursor ?? undefined;
  } while (cursor && pages.length < 50);
  return pages;
};

/** The payer entries in an account's item collection (their payer ids). */
const payerEntriesOf = async (clientId: string, externalId: string) => {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :payer)',
      ExpressionAttributeNames: { '#pk': TABLE_KEY.partition, '#sk': TABLE_KEY.sort },
      ExpressionAttributeValues: {
        ':pk': portalAccountEntity.key({ clientId, externalId }).pk,
        ':payer': 'PAYER#',
      },
      ConsistentRead: true,
    }),
  );
  return Items.map((item) => item.payerId).sort();
};

const recorder = recordDynamoCalls();
afterAll(() => recorder.stop());
const readsOf = () => ({
  items: recorder.calls.reduce((sum, call) => sum + call.scanned, 0),
  indexes: [...new Set(recorder.calls.flatMap((call) => (call.index ? [call.index] : [])))],
});

describe('filters at 1,000 accounts read what they return, not the organization', () => {
  let t: Tenant;
  const ids = (n: number) => `acct-${String(n).padStart(4, '0')}`;
  beforeAll(async () => {
    t = await newTenant('portal-accounts-1000');
    const ref = (n: number) => ({
      clientId: t.clientId,
      organizationId: t.organizationId,
      clientUserId: t.clientUserId,
      externalId: ids(n),
    });
    // The matches are the newest: read in creation order, a filter would find them last.
    const rare = (n: number) =>
      n >= 998
        ? { portalId: 'evicore', payerIds: ['RARE'], displayName: `Needle ${n}`, status: 'disabled' as const }
        : {};
    await seedPortalAccounts(Array.from({ length: 1000 }, (_, n) => storedPortalAccount(ref(n), n, rare(n))));
  }, 120_000);

  it.each([
    ['portalId', { portalId: 'evicore' }, ['gsi2']],
    ['status', { status: 'disabled' as const }, ['gsi3']],
    ['portalId and status', { portalId: 'evicore', status: 'disabled' as const }, ['gsi4']],
    ['payerId (entries, then their accounts)', { payerId: 'RARE' }, ['gsi2']],
    ['payerId and status', { payerId: 'RARE', status: 'disabled' as const }, ['gsi2']],
  ])('by %s: one key condition, the 2 matches and nothing else read', async (_, criteria, indexes) => {
    recorder.reset();
    const page = await filter(t, criteria);
    expect(idsOf(page)).toEqual([ids(998), ids(999)]);
    expect(page).toMatchObject({ nextCursor: null, partial: false });
    const reads = readsOf();
    expect(reads.indexes).toEqual(indexes);
    // The client user, then the matches (a payer filter reads its 2 entries and their 2 accounts).
    expect(reads.items).toBeLessThanOrEqual(1 + 2 * 2);
  });

  it('by free text (3 characters or more): the trigram entries of the matches, then their accounts', async () => {
    recorder.reset();
    const first = await filter(t, { search: 'needle' });
    expect(idsOf(first)).toEqual([ids(998), ids(999)]);
    expect(first).toMatchObject({ nextCursor: null, partial: false });
    // The client user, then the 2 entries of each of the search's 4 trigrams (the accounts: BatchGetItem).
    expect(readsOf()).toEqual({ items: 1 + 4 * 2, indexes: ['gsi2'] });
  });

  it('by free text of 1–2 characters: reads at most the bound per request, says a short page is partial, and finds every match', async () => {
    recorder.reset();
    const first = await filter(t, { search: 'ne' });
    expect(idsOf(first)).toEqual([]);
    expect(first.partial).toBe(true);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(readsOf().items).toBeLessThanOrEqual(1 + MAX_EVALUATED_PER_PAGE);

    const pages = await allPages(t, { search: 'ne' });
    expect(pages.flatMap((page) => page.ids)).toEqual([ids(998), ids(999)]);
    // One request per bound's worth of accounts, and one that finds the end (DynamoDB cannot tell sooner).
    expect(pages.length).toBeLessThanOrEqual(Math.ceil(1000 / MAX_EVALUATED_PER_PAGE) + 1);
    expect(pages.slice(0, -1).every((page) => page.partial)).toBe(true);
    expect(pages.at(-1)!.partial).toBe(false);
  });

  it('by free text with other criteria: reads trigram entries, checks the rest on the accounts', async () => {
    recorder.reset();
    const page = await filter(t, { portalId: 'evicore', search: 'NEEDLE 999' });
    expect(idsOf(page)).toEqual([ids(999)]);
    // One query's worth (100) shared by 4 of its trigrams: `nee` and `edl` (2 entries each), `999` (one), and
    // `e 9`, which every `office 9…` has (its first 25 entries).
    expect(readsOf()).toEqual({ items: 1 + 2 + 2 + 1 + 25, indexes: ['gsi2'] });
  });

  it('pages a payer filter in the stable order with look-ahead, across its entries', async () => {
    const pages = await allPages(t, { payerId: 'COMMON', pageSize: 100 });
    expect(pages).toHaveLength(10);
    const seen = pages.flatMap((page) => page.ids);
    expect(seen).toEqual(Array.from({ length: 998 }, (_, n) => ids(n)));
    expect(pages.some((page) => page.partial)).toBe(false);
  });
});

describe('combined criteria', () => {
  let t: Tenant;
  const create = async (externalId: string, body: Record<string, unknown>) => {
    const res = await call('POST', v11, {
      apiKey: t.apiKey,
      body: { externalId, clientUserId: t.clientUserId, username: `u-${externalId}`, password: 'pw', ...body },
    });
    expect(res.status, res.text).toBe(201);
  };
  beforeAll(async () => {
    t = await newTenant('portal-accounts-combined');
    await create('c-1', { portalId: 'availity', payerIds: ['P1', 'P2'], displayName: 'North Clinic' });
    await create('c-2', { portalId: 'availity', payerIds: ['P2'], status: 'disabled', displayName: 'North Annex' });
    await create('c-3', { portalId: 'navinet', payerIds: ['P1'], displayName: 'South Clinic' });
    await create('c-4', { portalId: 'availity', payerIds: ['P1'], status: 'disabled', displayName: 'West Clinic' });
  });

  it.each([
    [{ portalId: 'availity', status: 'active' as const }, ['c-1']],
    [{ portalId: 'availity', status: 'disabled' as const }, ['c-2', 'c-4']],
    [{ portalId: 'availity', search: 'north' }, ['c-1', 'c-2']],
    [{ status: 'disabled' as const, search: 'clinic' }, ['c-4']],
    [{ payerId: 'P1', portalId: 'availity' }, ['c-1', 'c-4']],
    [{ payerId: 'P1', status: 'active' as const }, ['c-1', 'c-3']],
    [{ payerId: 'P2', search: 'annex' }, ['c-2']],
    [{ payerId: 'P1', portalId: 'availity', status: 'disabled' as const, search: 'WEST' }, ['c-4']],
    [{ payerId: 'P9' }, []],
  ])('%o', async (criteria, expected) => {
    expect(idsOf(await filter(t, criteria))).toEqual(expected);
  });
});

describe('payer index entries', () => {
  it('follow the account through create, replace, a move to another organization and delete', async () => {
    const t = await newTenant('portal-accounts-payers');
    const externalId = uniqueId('pacc');
    const created = await call('POST', v11, {
      apiKey: t.apiKey,
      body: {
        externalId,
        clientUserId: t.clientUserId,
        portalId: 'sandbox',
        payerIds: ['A', 'B'],
        username: 'u',
        password: 'pw',
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(await payerEntriesOf(t.clientId, externalId)).toEqual(['A', 'B']);

    const replaced = await call('PUT', `${v11}/${externalId}`, {
      apiKey: t.apiKey,
      body: portalAccountReplacementOf(created.body, { payerIds: ['B', 'C'] }),
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(await payerEntriesOf(t.clientId, externalId)).toEqual(['B', 'C']);
    expect(idsOf(await filter(t, { payerId: 'A' }))).toEqual([]);
    expect(idsOf(await filter(t, { payerId: 'C' }))).toEqual([externalId]);

    const { organizationId: other } = await t.admin.createOrganization(t.clientId, 'other organization');
    const otherUser = uniqueId('user');
    await t.admin.createClientUser(t.clientId, other, otherUser);
    const moved = await call('PUT', `${v11}/${externalId}`, {
      apiKey: t.apiKey,
      body: portalAccountReplacementOf(replaced.body, { clientUserId: otherUser, password: 'pw2' }),
    });
    expect(moved.status, moved.text).toBe(200);
    expect(idsOf(await filter(t, { payerId: 'C' }))).toEqual([]);
    expect(idsOf(await accounts.filter({ clientId: t.clientId }, { clientUserId: otherUser, payerId: 'C' }))).toEqual([
      externalId,
    ]);

    expect((await call('DELETE', `${v11}/${externalId}`, { apiKey: t.apiKey })).status).toBe(204);
    expect(await payerEntriesOf(t.clientId, externalId)).toEqual([]);
  });

  it('an entry its account no longer agrees with is skipped, not returned', async () => {
    const t = await newTenant('portal-accounts-stale');
    const ref = { clientId: t.clientId, organizationId: t.organizationId, clientUserId: t.clientUserId };
    const kept = storedPortalAccount({ ...ref, externalId: uniqueId('kept') }, 1, { payerIds: ['X'] });
    const dropped = storedPortalAccount({ ...ref, externalId: uniqueId('dropped') }, 2, { payerIds: ['X'] });
    const deleted = storedPortalAccount({ ...ref, externalId: uniqueId('deleted') }, 3, { payerIds: ['X'] });
    for (const account of [kept, dropped, deleted]) await dynamoPortalAccountStore.create(account);
    // As if a concurrent write had changed or deleted the account and its entries had not followed.
    const item = portalAccountEntity.toItem({ ...dropped, payerIds: ['Y'] });
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: item }));
    await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: portalAccountEntity.key(deleted) }));

    expect(await payerEntriesOf(t.clientId, dropped.externalId)).toEqual(['X']);
    expect(idsOf(await filter(t, { payerId: 'X' }))).toEqual([kept.externalId]);
  });
});

describe('accounts written before the filter indexes', () => {
  it('are found by every filter once backfilled, unchanged otherwise', async () => {
    const t = await newTenant('portal-accounts-backfill');
    const account = storedPortalAccount(
      {
        clientId: t.clientId,
        organizationId: t.organizationId,
        clientUserId: t.clientUserId,
        externalId: uniqueId('old'),
      },
      5,
      { portalId: 'carelon', payerIds: ['OLD'], status: 'disabled' },
    );
    // The item as written before: gsi1 only, no gsi2–gsi4 attributes, no payer entries.
    const { gsi2pk, gsi2sk, gsi3pk, gsi3sk, gsi4pk, gsi4sk, ...legacy } = portalAccountEntity.toItem(account);
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: legacy }));
    expect(idsOf(await filter(t, {}))).toEqual([account.externalId]);
    expect(idsOf(await filter(t, { payerId: 'OLD' }))).toEqual([]);
    expect(idsOf(await filter(t, { portalId: 'carelon' }))).toEqual([]);
    expect(idsOf(await filter(t, { search: account.username }))).toEqual([]);

    const { rewritten } = await backfillPortalAccountIndexes();
    expect(rewritten).toBeGreaterThanOrEqual(1);
    const criteria = [{ payerId: 'OLD' }, { portalId: 'carelon' }, { status: 'disabled' as const }];
    for (const criterion of [...criteria, { search: account.username }]) {
      expect(idsOf(await filter(t, criterion)), JSON.stringify(criterion)).toEqual([account.externalId]);
    }
    expect(await dynamoPortalAccountStore.get(t.clientId, account.externalId)).toEqual(account);
  });
});
