/**
 * `npm run bench:filter`: what a sparse portal-account filter costs in an organization of 10 accounts
 * and in ones of 1,000 and 10,000 (BENCH_SIZES=10,1000 to skip the largest), through the portal-account service and its DynamoDB store (the embedded
 * dynalite). For each filter (by portal, status, portal and status, payer, free text; the unfiltered
 * list for comparison) it measures the first page's p50 and p95 latency and the read capacity it consumed
 * (ReturnConsumedCapacity), and the same for following nextCursor to the end; it prints the ratios
 * of each size vs 10 and the p50 against a floor measured in the same run (GetItem of one account). The
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
/** The organizations' sizes: the first is the base the others are compared with (BENCH_SIZES=10,1000). */
const SIZES = (process.env.BENCH_SIZES ?? '10,1000,10000').split(',').map(Number);
const [BASE, ...LARGER] = SIZES as [number, ...number[]];

const stack = await startLocalStack({ port: 0 });
const { dynamoPortalAccountStore } = await import('#lib/portal-accounts/dynamo-portal-account-store');
const { portalAccountService } = await import('#lib/portal-accounts/portal-accounts');
const { dynamoStorageQuotas } = await import('#lib/tenancy/storage-quotas-service');
const { recordDynamoCalls } = await import('#test/support/dynamo-recorder');
const { storedPortalAccount } = await import('#test/support/fixtures');
const { seedPortalAccounts } = await import('#test/support/seed-portal-accounts');
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
  const seeding = performance.now();
  if (size > 1000) {
    await seedPortalAccounts(accounts);
  } else {
    for (let i = 0; i < accounts.length; i += 25) {
      await Promise.all(accounts.slice(i, i + 25).map((account) => dynamoPortalAccountStore.create(account)));
    }
  }
  const how = size > 1000 ? 'BatchWriteItem of its items' : 'through the store';
  process.stdout.write(`seeded ${size} accounts (${how}) in ${((performance.now() - seeding) / 1000).toFixed(1)} s\n`);
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
  p95: number;
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
  const costs = new Map<number, Omit<Measured, 'p50' | 'p95'>>();
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
      return [size, { p50: percentile(sorted, 50), p95: percentile(sorted, 95), ...costs.get(size)! }];
    }),
  ) as Record<number, Measured>;
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
  /** Each larger size against the base: first page p50 and RCU. */
  ratios: Record<number, { p50: number; rcu: number }>;
}> = [];
for (const { name, filter, matches } of filters) {
  const bySize: Record<number, SizeResult> = {};
  const firstPages = await measure((size) => firstPage(size, filter));
  for (const size of SIZES) {
    const first = firstPages[size]!;
    const { found, pages } = await allPages(size, filter);
    if (found !== matches(size)) throw new Error(`${name} at ${size}: found ${found}, expected ${matches(size)}`);
    recorder.reset();
    await allPages(size, filter);
    bySize[size] = {
      firstPage: { ...first, p50VsFloor: first.p50 / floors[size]!.p50 },
      toTheEnd: { pages, rcu: capacity(), itemsRead: scanned(), queries: recorder.calls.length },
    };
  }
  const small = bySize[BASE]!.firstPage;
  const ratios = Object.fromEntries(
    LARGER.map((size) => {
      const large = bySize[size]!.firstPage;
      return [size, { p50: large.p50 / small.p50, rcu: large.rcu / small.rcu }];
    }),
  );
  rows.push({ name, filter, bySize, ratios });
}
recorder.stop();

const fixed = (n: number, digits = 2) => n.toFixed(digits);
process.stdout.write(
  `floor (GetItem of one account), p50: ${SIZES.map((size) => `${fixed(floors[size]!.p50, 3)} ms at ${size}`).join(', ')}\n`,
);
for (const size of LARGER) {
  process.stdout.write(
    `\nfirst page, ${size} vs ${BASE}: ${'p50'.padStart(16)} ${'p95'.padStart(16)} ${'×p50'.padStart(6)}  ${'RCU'.padStart(14)} ${'×RCU'.padStart(6)}  items read  to the end @${size}\n`,
  );
  for (const { name, bySize, ratios } of rows) {
    const [small, large] = [bySize[BASE]!.firstPage, bySize[size]!.firstPage];
    const pair = (a: number, b: number, digits: number) => `${fixed(a, digits)}/${fixed(b, digits)}`.padStart(16);
    process.stdout.write(
      `${name.padEnd(32)} ${pair(small.p50, large.p50, 2)} ${pair(small.p95, large.p95, 2)} ${fixed(ratios[size]!.p50).padStart(5)}×  ${pair(small.rcu, large.rcu, 1).slice(2)} ${fixed(ratios[size]!.rcu).padStart(5)}×  ${String(large.itemsRead).padStart(10)}  ${bySize[size]!.toTheEnd.pages} page(s), ${fixed(bySize[size]!.toTheEnd.rcu, 1)} RCU\n`,
    );
  }
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
