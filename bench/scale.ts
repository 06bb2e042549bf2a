/**
 * `npm run bench:scale`: the work queues every client writes to, at 100 times today's items, on the local
 * stack's DynamoDB (dynalite, in process, as the other benches start it). Today's base, assumed: 10 clients (the
 * API stage's 500 requests/s is ten default clients at 50/s, docs/security.md) with 5 items each waiting in a
 * queue at one poll or tick: 50 pending outbox events, 50 due re-checks. 100 times that is BENCH_CLIENTS (default
 * 1,000) clients × BENCH_PER_CLIENT (default 5) = 5,000 items in each queue; one event in five is one busy
 * client's, so one client writes 1,000 of them.
 *
 * 1. Spread: the items written as the stores write them; then, per shard of the pending outbox index and of
 *    the due re-checks index (counted there with a Query each), its share of the items against the mean, and
 *    whether every shard stays within 2× the mean (and above half of it). The busy client's events likewise.
 * 2. Reads: the relay's read of the 25 oldest pending events (every shard and the old partition, merged) against
 *    the read it replaces, one Query of one partition holding the same items (the floor); and one shard's
 *    Query alone, to tell the merge from the number of Queries. Medians.
 * 3. Relay: the local relay (lib/events/relay.ts) hands over every event, with a delivery that only records;
 *    events per second, and whether they came oldest first. The floor: the same relay on one partition, with
 *    the one-partition read, over BENCH_FLOOR_ITEMS (default 1,000) events.
 * 4. Selection: the re-check dispatcher's selectDue (lib/rechecks/rechecks.ts, as SelectDueRechecks runs it)
 *    until nothing is due: re-checks moved on per second, and per selection. The floor: the same re-checks all
 *    in one shard (the dispatcher then takes one shard's 50 per selection).
 *
 * On DynamoDB the shards' Queries run in parallel, each partition with its own capacity; dynalite serves them one
 * after another on this process's core, so the read ratios here are an upper bound of the cost. Results:
 * bench/results/scale.json. Exits 1 when a shard passes 2× the mean, or an item is lost or out of order.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startDynalite } from '#local/emulators';
import { ensureTable, localCredentials } from '#local/table';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const PER_CLIENT = Number(process.env.BENCH_PER_CLIENT ?? 5);
const ITEMS = CLIENTS * PER_CLIENT;
const BUSY_CLIENT = 'scale-busy-client';
const FLOOR_ITEMS = Math.min(ITEMS, Number(process.env.BENCH_FLOOR_ITEMS ?? 1000));
const READS = Number(process.env.BENCH_READS ?? 40);
const SHARDED = 'scale-sharded';
const ONE = 'scale-one-partition';

const dynalite = await startDynalite({});
Object.assign(process.env, {
  ...localCredentials,
  AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
  TABLE_NAME: SHARDED,
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});
await ensureTable(dynalite.endpoint, SHARDED);
await ensureTable(dynalite.endpoint, ONE);

// Loaded once the environment is set: the SDK client reads the endpoint when it is made.
const { BatchWriteCommand, QueryCommand } = await import('@aws-sdk/lib-dynamodb');
const { dynamo } = await import('#lib/aws/dynamodb');
const { GSI1 } = await import('#lib/table');
const { tableShards, shardOf } = await import('#lib/table-shards');
const { outboxEntity, outboxPendingPartitions } = await import('#lib/entities/outbox');
const { recheckEntity } = await import('#lib/entities/recheck');
const { requestEntity } = await import('#lib/entities/request');
const { newEvent } = await import('#lib/events/events');
const { outboxItemOf } = await import('#lib/events/outbox');
const { dynamoOutboxStore } = await import('#lib/events/dynamo-outbox-store');
const { startOutboxRelay } = await import('#lib/events/relay');
const { dynamoRecheckStore } = await import('#lib/rechecks/dynamo-recheck-store');
const { rechecksDispatcher } = await import('#lib/rechecks/rechecks');
const { dynamoRequestStore } = await import('#lib/requests/dynamo-request-store');
type OutboxStore = import('#lib/events/outbox').OutboxStore;
type Item = Record<string, unknown>;

const onTable = async <T>(table: string, work: () => Promise<T>) => {
  process.env.TABLE_NAME = table;
  try {
    return await work();
  } finally {
    process.env.TABLE_NAME = SHARDED;
  }
};

/** Writes `items` to `table`, 25 to a request, 4 requests at a time. */
const put = async (table: string, items: Item[]) => {
  const chunks: Item[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  const write = async (chunk: Item[]) => {
    let requests = chunk.map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const { UnprocessedItems } = await dynamo.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
      requests = (UnprocessedItems?.[table] ?? []) as typeof requests;
    }
  };
  for (let i = 0; i < chunks.length; i += 4) await Promise.all(chunks.slice(i, i + 4).map(write));
};

/** How many items a gsi1 partition holds (a COUNT Query, every page); only `clientId`'s when given. */
const countIn = async (table: string, partition: string, clientId?: string) => {
  let count = 0;
  let start: Item | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: table,
        IndexName: GSI1.name,
        KeyConditionExpression: '#pk = :pk',
        ...(clientId ? { FilterExpression: 'clientId = :clientId' } : {}),
        ExpressionAttributeNames: { '#pk': GSI1.partition },
        ExpressionAttributeValues: { ':pk': partition, ...(clientId ? { ':clientId': clientId } : {}) },
        Select: 'COUNT',
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
};

/** Each shard's count against the mean: within 2× it (over and under) or not. */
const spreadOf = (counts: number[]) => {
  const mean = counts.reduce((sum, n) => sum + n, 0) / counts.length;
  const ratios = counts.map((n) => n / mean);
  return { counts, mean, ratios, within2x: ratios.every((r) => r <= 2 && r >= 0.5) };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const clientOf = (i: number) => `scale-client-${i % CLIENTS}`;
const base = Date.parse('2026-03-01T00:00:00.000Z');

// --- 1. The items, as the stores write them.
const events = Array.from({ length: ITEMS }, (_, i) =>
  newEvent('automation.batch_finished', i % 5 === 0 ? BUSY_CLIENT : clientOf(i), new Date(base + i).toISOString(), {
    batchId: crypto.randomUUID(),
    total: 1,
    counts: { succeeded: 1, failed: 0 },
  }),
);
const outboxItems = events.map((event) => outboxEntity.toItem(outboxItemOf(event)) as Item);
// The old key: every client's pending events in one partition, no shard.
const onePartitionItems = outboxItems.slice(0, FLOOR_ITEMS).map(({ shard: _, ...item }) => ({
  ...item,
  gsi1pk: 'OUTBOX#PENDING',
}));

const now = new Date();
const recheckItems = (shardFor: (clientId: string, externalId: string) => string, count: number) =>
  Array.from({ length: count }, (_, i) => {
    const clientId = clientOf(i);
    const externalId = `SCALE-${i}`;
    const at = new Date(now.getTime() - 86_400_000).toISOString();
    return [
      requestEntity.toItem({
        clientId,
        externalId,
        document: {},
        authorization: { status: 'pending', number: null, decisionDate: null, lastCheckedAt: at },
        version: 1,
        createdAt: at,
        updatedAt: at,
      }),
      recheckEntity.toItem({
        clientId,
        externalId,
        shard: shardFor(clientId, externalId),
        since: at,
        checksDone: 0,
        dueAt: new Date(now.getTime() - 3_600_000 + (i % 3600) * 1000).toISOString(),
        clientUserId: `user-${clientId}`,
        organizationId: `org-${clientId}`,
        portalAccountId: `account-${clientId}`,
        version: 1,
        createdAt: at,
        updatedAt: at,
      }),
    ] as Item[];
  }).flat();

const seeding = performance.now();
await put(SHARDED, outboxItems);
await put(ONE, onePartitionItems);
await put(SHARDED, recheckItems(shardOf, ITEMS));
await put(
  ONE,
  recheckItems(() => '0', FLOOR_ITEMS),
);
const seedSeconds = (performance.now() - seeding) / 1000;

const outboxSpread = spreadOf(
  await Promise.all(tableShards.map((shard) => countIn(SHARDED, outboxEntity.keys.gsi1pk.render({ shard })))),
);
const recheckSpread = spreadOf(
  await Promise.all(tableShards.map((shard) => countIn(SHARDED, recheckEntity.keys.gsi1pk.render({ shard })))),
);
const busySpread = spreadOf(
  await Promise.all(
    tableShards.map((shard) => countIn(SHARDED, outboxEntity.keys.gsi1pk.render({ shard }), BUSY_CLIENT)),
  ),
);

// --- 2. One read of the 25 oldest pending events: every shard merged, against one partition's Query.
/** One Query of one gsi1 partition of the current table: the read the shards replace, as it was. */
const queryOne = async (partition: string, limit: number) => {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: process.env.TABLE_NAME,
      IndexName: GSI1.name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': GSI1.partition },
      ExpressionAttributeValues: { ':pk': partition },
      Limit: limit,
    }),
  );
  return (Items ?? []).map((item) => outboxEntity.fromItem(item).event);
};
const onePartitionStore: OutboxStore = {
  ...dynamoOutboxStore,
  pending: (limit) => queryOne('OUTBOX#PENDING', limit),
};
const timed = async (read: () => Promise<unknown>) => {
  const start = performance.now();
  await read();
  return performance.now() - start;
};
const shardedReads: number[] = [];
const oneReads: number[] = [];
const oneShardReads: number[] = [];
for (let i = 0; i < READS; i++) {
  shardedReads.push(await timed(() => dynamoOutboxStore.pending(25)));
  oneReads.push(await onTable(ONE, () => timed(() => onePartitionStore.pending(25))));
  oneShardReads.push(await timed(() => queryOne(outboxEntity.keys.gsi1pk.render({ shard: '0' }), 25)));
}
const firstBatch = await dynamoOutboxStore.pending(25);
const readsInOrder = firstBatch.every((event, i) => event.id === events[i]!.id);

// --- 3. The relay, every event handed over.
const relayAll = async (outbox: OutboxStore, expected: number) => {
  const handed: string[] = [];
  const start = performance.now();
  const relay = startOutboxRelay({
    outbox,
    delivery: {
      deliver: async (event) => {
        handed.push(event.id);
      },
    },
    pollIntervalMs: 5,
  });
  while (handed.length < expected) await new Promise((resolve) => setTimeout(resolve, 20));
  const seconds = (performance.now() - start) / 1000;
  await relay.close();
  return { handed, seconds, perSecond: expected / seconds };
};
const relayed = await relayAll(dynamoOutboxStore, ITEMS);
const relayedInOrder = relayed.handed.every((id, i) => id === events[i]!.id);
const leftPending = (await Promise.all(outboxPendingPartitions.map((p) => countIn(SHARDED, p)))).reduce(
  (a, b) => a + b,
);
const floorRelay = await onTable(ONE, () => relayAll(onePartitionStore, FLOOR_ITEMS));

// --- 4. The re-check selection, until nothing is due.
const selectAll = async () => {
  const dispatcher = rechecksDispatcher({
    store: dynamoRecheckStore,
    requests: dynamoRequestStore,
    // Every client's re-checks on, with the default first interval: the bench is about the index, not settings.
    settingsOf: async () => ({ enabled: true, firstIntervalSeconds: 3600, payerFirstIntervalSeconds: 900 }),
    startBatch: async () => {
      throw new Error('selectDue starts nothing');
    },
    now: () => now,
  });
  const start = performance.now();
  let [selections, moved, more] = [0, 0, true];
  while (more) {
    const selection = await dispatcher.selectDue();
    selections += 1;
    moved += selection.groups.reduce((sum, group) => sum + group.requestExternalIds.length, 0);
    more = selection.more;
  }
  const seconds = (performance.now() - start) / 1000;
  return { selections, moved, seconds, perSecond: moved / seconds, perSelection: moved / selections };
};
const selected = await selectAll();
const floorSelected = await onTable(ONE, selectAll);
await dynalite.close();

// --- Report.
const lines: string[] = [];
const out = (line = '') => lines.push(line);
out(
  `100× today's items: ${CLIENTS} clients × ${PER_CLIENT} = ${ITEMS} in each queue (today, assumed: ${CLIENTS / 100} × ${PER_CLIENT} = ${ITEMS / 100})`,
);
out(
  `seeded ${ITEMS * 3 + FLOOR_ITEMS * 3} items in ${seedSeconds.toFixed(1)} s; ${busySpread.counts.reduce((a, b) => a + b)} of the events are one busy client's`,
);
const spreadTable = (title: string, spread: ReturnType<typeof spreadOf>) => {
  out(`${title}: mean ${spread.mean.toFixed(1)} a shard`);
  out('  shard  items  share/mean  within 2×');
  for (const [i, count] of spread.counts.entries()) {
    const ratio = spread.ratios[i]!;
    out(
      `  ${i.toString().padEnd(5)}  ${String(count).padStart(5)}  ${ratio.toFixed(3).padStart(10)}  ${ratio <= 2 && ratio >= 0.5 ? 'yes' : 'NO'}`,
    );
  }
};
spreadTable(`pending outbox index (OUTBOX#PENDING#<shard>), ${ITEMS} events`, outboxSpread);
spreadTable(`due re-checks index (RECHECKS#<shard>), ${ITEMS} re-checks`, recheckSpread);
spreadTable(`the busy client's events alone, in the same index`, busySpread);
const shardedRead = median(shardedReads);
const oneRead = median(oneReads);
const oneShardRead = median(oneShardReads);
const queries = outboxPendingPartitions.length;
out(
  `read of the 25 oldest pending (median of ${READS}): every shard merged ${shardedRead.toFixed(2)} ms; one partition (floor) ${oneRead.toFixed(2)} ms: ${(shardedRead / oneRead).toFixed(2)}× the floor; oldest first: ${readsInOrder ? 'yes' : 'NO'}`,
);
out(
  `  one shard's Query alone ${oneShardRead.toFixed(2)} ms: the merged read is ${queries} Queries, ${(shardedRead / (queries * oneShardRead)).toFixed(2)}× ${queries} of them one after another (dynalite serves them in turn; DynamoDB in parallel)`,
);
out(
  `relay: ${ITEMS} events in ${relayed.seconds.toFixed(1)} s, ${relayed.perSecond.toFixed(0)}/s; oldest first: ${relayedInOrder ? 'yes' : 'NO'}; left pending: ${leftPending}`,
);
out(
  `relay, one partition (floor): ${FLOOR_ITEMS} events, ${floorRelay.perSecond.toFixed(0)}/s: sharded ${(relayed.perSecond / floorRelay.perSecond).toFixed(2)}× the floor`,
);
out(
  `selection: ${selected.moved} re-checks moved on in ${selected.selections} selections, ${selected.seconds.toFixed(1)} s: ${selected.perSecond.toFixed(0)}/s, ${selected.perSelection.toFixed(0)} a selection`,
);
out(
  `selection, one shard (floor): ${floorSelected.moved} in ${floorSelected.selections} selections: ${floorSelected.perSecond.toFixed(0)}/s, ${floorSelected.perSelection.toFixed(0)} a selection: sharded ${(selected.perSecond / floorSelected.perSecond).toFixed(2)}× the floor per second, ${(selected.perSelection / floorSelected.perSelection).toFixed(2)}× per selection`,
);
out(
  `write capacity on DynamoDB (design limit: ~1,000 writes/s a partition): ${tableShards.length * 1000}/s a queue, 1,000/s before`,
);
process.stdout.write(`${lines.join('\n')}\n`);

const ok =
  outboxSpread.within2x &&
  recheckSpread.within2x &&
  busySpread.within2x &&
  readsInOrder &&
  relayedInOrder &&
  leftPending === 0 &&
  selected.moved === ITEMS &&
  floorSelected.moved === FLOOR_ITEMS;
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/scale.json',
  `${JSON.stringify(
    {
      clients: CLIENTS,
      perClient: PER_CLIENT,
      items: ITEMS,
      floorItems: FLOOR_ITEMS,
      spread: { outbox: outboxSpread, rechecks: recheckSpread, busyClient: busySpread },
      readMs: { sharded: shardedRead, onePartition: oneRead, oneShard: oneShardRead, ratio: shardedRead / oneRead },
      relay: { perSecond: relayed.perSecond, seconds: relayed.seconds, inOrder: relayedInOrder, leftPending },
      relayFloor: { perSecond: floorRelay.perSecond, ratio: relayed.perSecond / floorRelay.perSecond },
      selection: selected,
      selectionFloor: floorSelected,
      ok,
    },
    null,
    2,
  )}\n`,
);
if (!ok) process.exitCode = 1;
