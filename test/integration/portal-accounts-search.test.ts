import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { normalizeSearchText, type StoredPortalAccount } from '#lib/entities/portal-account';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import type { FilterRequest } from '#lib/portal-accounts/portal-account-input';
import { portalAccountsWithSecrets } from '#lib/portal-accounts/service-with-secrets';
import { newTenant } from '#test/support/api';
import { storedPortalAccount } from '#test/support/fixtures';

/*
 * The search index (docs/data-model.md, patterns 40–41) finds exactly what a substring match of every
 * account finds: random names and usernames over an alphabet of Unicode cases NFKC and lower-casing
 * change (ligatures, full width, compatibility letters, combining marks, ß/ẞ, İ, astral characters),
 * renamed, moved out and deleted accounts, and random searches (substrings of names and noise), alone
 * and with the other criteria; every page followed to the end.
 */
type Tenant = Awaited<ReturnType<typeof newTenant>>;
type Criteria = Omit<FilterRequest, 'clientUserId' | 'cursor' | 'pageSize'>;

const ALPHABET = [
  'a',
  'b',
  'n',
  'e',
  'A',
  'B',
  'N',
  'E',
  '1',
  ' ',
  '-',
  '@',
  '.',
  'ß',
  'ẞ',
  'ﬁ',
  'ﬀ',
  'Å',
  'Å',
  'é',
  'e\u0301',
  'Ａ',
  'ａ',
  'İ',
  'ı',
  'Σ',
  'ς',
  'σ',
  '😀',
  '𝐀',
  '½',
  'ǅ',
];
const text = (minLength: number) =>
  fc.array(fc.constantFrom(...ALPHABET), { minLength, maxLength: 12 }).map((parts) => parts.join(''));
const PORTALS = ['availity', 'evicore'];
const PAYERS = ['P1', 'P2', 'P3'];

const accounts = portalAccountsWithSecrets;
let t: Tenant;
/** The organization's accounts as stored, in creation order; those moved to another organization. */
let stored: StoredPortalAccount[] = [];
const moved: StoredPortalAccount[] = [];
const elsewhere = () => `${t.organizationId}-elsewhere`;

const bruteForce = (criteria: Criteria) => {
  const search = criteria.search === undefined ? undefined : normalizeSearchText(criteria.search.trim());
  return stored
    .filter(
      (account) =>
        (criteria.portalId === undefined || account.portalId === criteria.portalId) &&
        (criteria.status === undefined || account.status === criteria.status) &&
        (criteria.payerId === undefined || account.payerIds.includes(criteria.payerId)) &&
        (search === undefined ||
          normalizeSearchText(account.displayName).includes(search) ||
          normalizeSearchText(account.username).includes(search)),
    )
    .map((account) => account.externalId);
};

const indexed = async (criteria: Criteria) => {
  const found: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await accounts.filter(
      { clientId: t.clientId },
      { clientUserId: t.clientUserId, ...criteria, pageSize: 7, ...(cursor ? { cursor } : {}) },
    );
    found.push(...page.items.map((account) => account.externalId));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && ++pages < 100);
  return found;
};

describe('free-text search through the search index', () => {
  beforeAll(async () => {
    t = await newTenant('portal-accounts-search');
    const fields = fc.sample(
      fc.record({
        displayName: text(1),
        username: text(1),
        portalId: fc.constantFrom(...PORTALS),
        status: fc.constantFrom('active' as const, 'disabled' as const),
        payerIds: fc.subarray(PAYERS, { minLength: 1 }),
        fate: fc.constantFrom('keep', 'keep', 'rename', 'move', 'delete'),
        renamed: text(0),
      }),
      { numRuns: 60, seed: 21 },
    );
    const ref = (i: number) => ({
      clientId: t.clientId,
      organizationId: t.organizationId,
      clientUserId: t.clientUserId,
      externalId: `s-${String(i).padStart(3, '0')}`,
    });
    const created = fields.map(({ fate, renamed, ...rest }, i) => storedPortalAccount(ref(i), i, rest));
    await Promise.all(created.map((account) => dynamoPortalAccountStore.create(account)));
    stored = [];
    for (const [i, account] of created.entries()) {
      const { fate, renamed } = fields[i]!;
      const next = { ...account, version: account.version + 1 };
      if (fate === 'rename') {
        const changed = { ...next, displayName: `${renamed}${account.username.slice(0, 2)}` };
        await dynamoPortalAccountStore.update(changed, account.version);
        stored.push(changed);
      } else if (fate === 'move') {
        const away = { ...next, organizationId: elsewhere() };
        await dynamoPortalAccountStore.update(away, account.version);
        moved.push(away);
      } else if (fate === 'delete') {
        await dynamoPortalAccountStore.delete(account.clientId, account.externalId, account.version);
      } else {
        stored.push(account);
      }
    }
  }, 120_000);

  it('finds what a substring match of every account finds, in the same order', async () => {
    const names = stored.flatMap((account) => [account.displayName, account.username]);
    const substring = fc
      .tuple(fc.constantFrom(...names), fc.nat(), fc.integer({ min: 1, max: 8 }))
      .map(([name, start, length]) => {
        const points = Array.from(name);
        const from = start % points.length;
        return points.slice(from, from + length).join('');
      });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(substring, substring, text(1)).filter((search) => search.trim() !== ''),
        fc.record(
          {
            portalId: fc.constantFrom(...PORTALS),
            status: fc.constantFrom('active' as const, 'disabled' as const),
            payerId: fc.constantFrom(...PAYERS),
          },
          { requiredKeys: [] },
        ),
        async (search, rest) => {
          const criteria = { ...rest, search };
          expect(await indexed(criteria), JSON.stringify(criteria)).toEqual(bruteForce(criteria));
        },
      ),
      { numRuns: 150, seed: 21 },
    );
  }, 120_000);

  it('finds a moved account in its new organization only', async () => {
    expect(moved.length).toBeGreaterThan(0);
    for (const account of moved) {
      const search = normalizeSearchText(account.displayName.trim());
      if (search === '') continue;
      const page = (organizationId: string) =>
        dynamoPortalAccountStore.page({
          clientId: t.clientId,
          organizationId,
          criteria: { search },
          limit: 100,
          maxEvaluated: 1_000,
        });
      expect((await page(elsewhere())).items.map((a) => a.externalId)).toContain(account.externalId);
      expect((await page(t.organizationId)).items.map((a) => a.externalId)).not.toContain(account.externalId);
    }
  });
});
