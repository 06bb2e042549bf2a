/**
 * `npm run bench:filter`: what a sparse portal-account filter costs in an organization of 10 accounts
 * and in one of 1,000, through the portal-account service and its DynamoDB store (the embedded
 * dynalite). For each filter (by portal, status, portal and status, payer, free text; the unfiltered
 * list for comparison) it measures the first page's p50 latency and the read capacity it consumed
 * (ReturnConsumedCapacity), and the same for following nextCursor to the end; it prints the ratios
 * 1,000 vs 10 and the p50 against a floor measured in the same run (GetItem of one account). The two
 * sizes are measured in turns, so a change in the shared machine's load weighs on both.
 * Results go to bench/results/filter.json. Bounded: fixed iteration counts, in memory.
 *
 * The 2 accounts that match each sparse filter are the organization's newest: a filter that reads
 * in creation order finds them last (the worst case for a FilterExpression).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '#local/stack';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 60);
const WARMUP = 5;
const SIZES = [10, 1000] as const;

const stack = await startLocalStack({ port: 0 });
const { dynamoPortalAccountStore } = await import('#lib/portal-accounts/dynamo-portal-account-store');
const { portalAccountService } = await import('#lib/portal-accounts/portal-accounts');
const { dynamoStorageQuotas } = await import('#lib/tenancy/storage-quotas-service');
const { recordDynamoCalls } = await import('#test/support/dynamo-recorder');
const { storedPortalAccount } = await import('#test/support/fixtures');
type Filter = Omit<import('#lib/portal-accounts/portal-account-input').FilterRequest, 'clientUserId'>;

const clientId = `bench-${Date.now().toString(36)}`;
const organizationOf = (size: number) => `org-${size}`;
const clientUserOf = (size: number) => `user-${size}`;

const service = portalAccountService({
  store: dynamoPortalAccountStore,
  quotas: dynamoStorageQuotas,
  tenants: {
    getClientUser: async (_clientId, clientUserId) => ({
      clientId,
      clientUserId,
      organizationId: organizationOf(Number(clientUserId.slice('user-'.length))),
      createdAt: '2026-01-01T00:00:00.000Z',
    }),
  },
  cursorKeys: () => [Buffer.alloc(32, 7)],
});

/** Each sparse criterion matches the organization's 2 newest accounts (status: the newest alone). */
const accountOf = (size: number, i: number) => {
  const rare = i >= size - 2;
  return storedPortalAccount(
    {
      clientId,
      organizationId: organizationOf(size),
      clientUserId: clientUserOf(size),
      externalId: `acct-${size}-${String(i).padStart(4, '0')}`,
    },
    i,
    {
      portalId: rare ? 'evicore' : 'availity',
      payerIds: rare ? ['RARE', 'P2'] : ['COMMON', 'P2'],
      displayName: rare ? `Needle office ${i}` : `Clinic office ${i}`,
      status: rare && i === size - 1 ? 'disabled' : 'active',
    },
  );
};

for (const size of SIZES) {
  const accounts = Array.from({ length: size }, (_, i) => accountOf(size, i));
  for (let i = 0; i < accounts.length; i += 25) {
    await Promise.all(accounts.slice(i, i + 25).map((account) => dynamoPortalAccountStore.create(account)));
  }
}

const filters: Array<{ name: string; filter: Filter; matches: (size: number) => number }> = [
  { name: 'list (no filter, page of 25)', filter: {}, matches: (size) => size },
  { name: 'portalId (sparse)', filter: { portalId: 'evicore' }, matches: () => 2 },
  { name: 'status (sparse)', filter: { status: 'disabled' }, matches: () => 1 },
  { name: 'portalId + status', filter: { portalId: 'evicore', status: 'active' }, matches: () => 1 },
  { name: 'payerId (sparse)', filter: { payerId: 'RARE' }, matches: () => 2 },
  { name: 'payerId + status', filter: { payerId: 'RARE', status: 'active' }, matches: () => 1 },
  { name: 'search (free text, sparse)', filter: { search: 'needle' }, matches: () => 2 },
];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const recorder = recordDynamoCalls();
const capacity = () => recorder.calls.reduce((sum, call) => sum + call.capacityUnits, 0);
const scanned = () => recorder.calls.reduce((sum, call) => sum + call.scanned, 0);

interface Measured {
  p50: number;
  rcu: number;
  itemsRead: number;
  queries: number;
}

/**
 * p50 of `run` at each size, and the capacity, items read and round trips of one run. The sizes
 * take turns, iteration by iteration, so the machine's load (shared, it varies) weighs on both alike.
 */
const measure = async (run: (size: number) => Promise<unknown>) => {
  const samples = new Map<number, number[]>(SIZES.map((size) => [size, []]));
  const costs = new Map<number, Omit<Measured, 'p50'>>();
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    for (const size of SIZES) {
      recorder.reset();
      const start = performance.now();
      await run(size);
      if (i >= WARMUP) samples.get(size)!.push(performance.now() - start);
      costs.set(size, { rcu: capacity(), itemsRead: scanned(), queries: recorder.calls.length });
    }
  }
  return Object.fromEntries(
    SIZES.map((size) => {
      const sorted = samples.get(size)!.sort((a, b) => a - b);
      return [size, { p50: percentile(sorted, 50), ...costs.get(size)! }];
    }),
  ) as Record<(typeof SIZES)[number], Measured>;
};

const firstPage = (size: number, filter: Filter) =>
  service.filter({ clientId }, { clientUserId: clientUserOf(size), ...filter });

/** Every page to the end; checks that the matches are all found. */
const allPages = async (size: number, filter: Filter) => {
  let found = 0;
  let pages = 0;
  let cursor: string | undefined;
  do {
    const page = await service.filter(
      { clientId },
      { clientUserId: clientUserOf(size), ...filter, pageSize: 100, ...(cursor ? { cursor } : {}) },
    );
    found += page.items.length;
    pages++;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return { found, pages };
};

const floors = await measure((size) => dynamoPortalAccountStore.get(clientId, `acct-${size}-0000`));

interface SizeResult {
  firstPage: Measured & { p50VsFloor: number };
  toTheEnd: { pages: number; rcu: number; itemsRead: number; queries: number };
}
const rows: Array<{
  name: string;
  filter: Filter;
  bySize: Record<number, SizeResult>;
  ratio1000vs10: { p50: number; rcu: number };
}> = [];
for (const { name, filter, matches } of filters) {
  const bySize: Record<number, SizeResult> = {};
  const firstPages = await measure((size) => firstPage(size, filter));
  for (const size of SIZES) {
    const first = firstPages[size as (typeof SIZES)[number]];
    const { found, pages } = await allPages(size, filter);
    if (found !== matches(size)) throw new Error(`${name} at ${size}: found ${found}, expected ${matches(size)}`);
    recorder.reset();
    await allPages(size, filter);
    bySize[size] = {
      firstPage: { ...first, p50VsFloor: first.p50 / floors[size as (typeof SIZES)[number]].p50 },
      toTheEnd: { pages, rcu: capacity(), itemsRead: scanned(), queries: recorder.calls.length },
    };
  }
  const [small, large] = [bySize[10]!.firstPage, bySize[1000]!.firstPage];
  rows.push({ name, filter, bySize, ratio1000vs10: { p50: large.p50 / small.p50, rcu: large.rcu / small.rcu } });
}
recorder.stop();

const fixed = (n: number, digits = 2) => n.toFixed(digits);
process.stdout.write(
  `floor (GetItem of one account): p50 ${fixed(floors[10].p50, 3)} ms at 10, ${fixed(floors[1000].p50, 3)} ms at 1,000\n`,
);
process.stdout.write(
  `${'first page'.padEnd(30)} ${'p50 @10'.padStart(9)} ${'p50 @1000'.padStart(10)} ${'×'.padStart(6)}  ${'RCU @10'.padStart(8)} ${'RCU @1000'.padStart(9)} ${'×'.padStart(6)}  read@1000  to the end @1000\n`,
);
for (const { name, bySize, ratio1000vs10: ratio } of rows) {
  const [small, large] = [bySize[10]!, bySize[1000]!];
  process.stdout.write(
    `${name.padEnd(30)} ${fixed(small.firstPage.p50).padStart(6)} ms ${fixed(large.firstPage.p50).padStart(7)} ms ${fixed(ratio.p50).padStart(5)}×  ${fixed(small.firstPage.rcu, 1).padStart(8)} ${fixed(large.firstPage.rcu, 1).padStart(9)} ${fixed(ratio.rcu).padStart(5)}×  ${String(large.firstPage.itemsRead).padStart(9)}  ${large.toTheEnd.pages} page(s), ${fixed(large.toTheEnd.rcu, 1)} RCU\n`,
  );
}

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/filter.json',
  JSON.stringify(
    { at: new Date().toISOString(), node: process.version, iterations: ITERATIONS, floors, filters: rows },
    null,
    2,
  ),
);
process.stdout.write('results: bench/results/filter.json\n');
await stack.close();
