import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { transactWrite } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import { outboxEntity, outboxPendingPartitions } from '#lib/entities/outbox';
import type { ServiceEvent } from '#lib/entities/service-event';
import { dynamoOutboxStore, outboxPutsOf } from '#lib/events/dynamo-outbox-store';
import type { EventDelivery } from '#lib/events/event-delivery';
import { newEvent } from '#lib/events/events';
import { outboxItemOf } from '#lib/events/outbox';
import { type OutboxRelay, startOutboxRelay } from '#lib/events/relay';
import { shardOf } from '#lib/table-shards';
import { dropTable, ensureTable } from '#local/table';
import { outboxItem } from './events-support.ts';

/*
 * The local relay (lib/events/relay.ts) with the real outbox store, on a table of its own in the test
 * stack's DynamoDB: the stack's own relay serves the stack's table, so it cannot take these events
 * first. Deliveries are recorded by a test EventDelivery.
 */
const endpoint = inject('stackEnv').AWS_ENDPOINT_URL_DYNAMODB!;
const table = `relay-${Date.now().toString(36)}`;
const stackTable = process.env.TABLE_NAME;
beforeAll(async () => {
  await ensureTable(endpoint, table);
  process.env.TABLE_NAME = table;
});
afterAll(async () => {
  process.env.TABLE_NAME = stackTable;
  await dropTable(endpoint, table);
});

const relays: OutboxRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.close()));
  // Each test starts from an empty outbox: what one left pending is marked here.
  for (const event of await dynamoOutboxStore.pending(100)) await dynamoOutboxStore.markRelayed(event, 'cleanup');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let clock = Date.parse('2026-03-01T00:00:00.000Z');

/** `n` events, a second apart, of `clients` clients in turn. */
const eventsOf = (n: number, clients = ['client-relay']) =>
  Array.from({ length: n }, (_, i) => {
    clock += 1000;
    return newEvent('automation.batch_finished', clients[i % clients.length]!, new Date(clock).toISOString(), {
      batchId: crypto.randomUUID(),
      total: i + 1,
      counts: { succeeded: i + 1, failed: 0 },
    });
  });

/** `n` events, a second apart, written to the outbox as the stores write them. */
const written = async (n: number, clients?: string[]) => {
  const events = eventsOf(n, clients);
  // A transaction holds at most 100 items.
  for (let i = 0; i < events.length; i += 100) await transactWrite(outboxPutsOf(events.slice(i, i + 100)));
  return events;
};

/** A delivery that records every hand-off, and whether the event was still pending when it was handed over. */
const recording = (behaviour: (event: ServiceEvent, attempt: number) => Promise<void> = async () => undefined) => {
  const attempts: Array<{ id: string; pendingDuringHandOff: boolean; ok: boolean }> = [];
  const delivery: EventDelivery = {
    deliver: async (event) => {
      const item = await outboxItem(event);
      const attempt = attempts.filter((seen) => seen.id === event.id).length + 1;
      const pendingDuringHandOff = outboxPendingPartitions.includes(String(item?.gsi1pk));
      const entry = { id: event.id, pendingDuringHandOff, ok: false };
      attempts.push(entry);
      await behaviour(event, attempt);
      entry.ok = true;
    },
  };
  return { delivery, attempts, delivered: () => attempts.filter((attempt) => attempt.ok).map((attempt) => attempt.id) };
};

const relay = (delivery: EventDelivery, options: { pollIntervalMs?: number; batchSize?: number } = {}) => {
  const started = startOutboxRelay({ outbox: dynamoOutboxStore, delivery, pollIntervalMs: 20, ...options });
  relays.push(started);
  return started;
};

const waitFor = async (done: () => boolean | Promise<boolean>, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(10);
  }
};

describe('the outbox relay', () => {
  it('hands each pending event over once, oldest first, and marks it relayed after the hand-off', async () => {
    const events = await written(3);
    const { delivery, attempts, delivered } = recording();
    relay(delivery);
    await waitFor(() => delivered().length === 3);
    await waitFor(async () => (await dynamoOutboxStore.pending(100)).length === 0);
    await sleep(150); // several more polls: nothing is handed over again
    expect(delivered()).toEqual(events.map((event) => event.id));
    expect(attempts.every((attempt) => attempt.pendingDuringHandOff)).toBe(true);
    for (const event of events) {
      const item = await outboxItem(event);
      expect(item).toMatchObject({ relayedAt: expect.any(String), version: 2, event });
      expect(item).not.toHaveProperty('gsi1pk');
    }
    expect(await dynamoOutboxStore.pending(100)).toEqual([]);
  });

  it('keeps an event whose hand-off failed pending and hands it over again; the others go on', async () => {
    const [first, flaky, last] = await written(3);
    const { delivery, attempts, delivered } = recording(async (event, attempt) => {
      if (event.id === flaky!.id && attempt <= 2) throw new Error('delivery is down');
    });
    relay(delivery);
    await waitFor(() => delivered().length === 3);
    expect(delivered().sort()).toEqual([first!.id, flaky!.id, last!.id].sort());
    expect(attempts.filter((attempt) => attempt.id === flaky!.id).map((attempt) => attempt.ok)).toEqual([
      false,
      false,
      true,
    ]);
    // Pending until its hand-off succeeded, relayed after.
    expect(attempts.filter((attempt) => attempt.id === flaky!.id).every((a) => a.pendingDuringHandOff)).toBe(true);
    await waitFor(async () => (await outboxItem(flaky!))?.relayedAt !== undefined);
    expect(attempts).toHaveLength(5);
  });

  it('reads again at once after a full batch, and waits the interval after a short one', async () => {
    const events = await written(5);
    const { delivery, delivered } = recording();
    relay(delivery, { batchSize: 2, pollIntervalMs: 60_000 });
    // Three polls, none of them after the 60 s interval.
    await waitFor(() => delivered().length === 5);
    expect(delivered()).toEqual(events.map((event) => event.id));
    const [later] = await written(1);
    await sleep(300);
    expect(delivered()).not.toContain(later!.id);
  });

  it('stops on close, once the hand-off under way has finished and been marked', async () => {
    const [slow] = await written(1);
    let handing = false;
    const { delivery, delivered } = recording(async () => {
      handing = true;
      await sleep(300);
    });
    const started = relay(delivery);
    await waitFor(() => handing);
    await started.close();
    expect(delivered()).toEqual([slow!.id]);
    expect(await outboxItem(slow!)).toMatchObject({ relayedAt: expect.any(String) });
    const [after] = await written(1);
    await sleep(200);
    expect(delivered()).toEqual([slow!.id]);
    expect(await outboxItem(after!)).toMatchObject({ gsi1pk: `OUTBOX#PENDING#${shardOf(after!.clientId, after!.id)}` });
  });

  it('spreads the pending events over the shards, and relays every one, oldest first across them', async () => {
    const events = await written(60, ['client-a', 'client-b', 'client-c']);
    const items = await Promise.all(events.map(outboxItem));
    for (const [i, item] of items.entries()) {
      const shard = shardOf(events[i]!.clientId, events[i]!.id);
      expect(item).toMatchObject({ gsi1pk: `OUTBOX#PENDING#${shard}`, shard });
    }
    // 60 events over 8 shards reach fewer than 6 of them about 3 times in 100 billion.
    expect(new Set(items.map((item) => item?.gsi1pk)).size).toBeGreaterThanOrEqual(6);
    expect(await dynamoOutboxStore.pending(100)).toEqual(events);

    const { delivery, delivered } = recording();
    // Batches of 7: each one the oldest 7 left, whichever shards hold them.
    relay(delivery, { batchSize: 7 });
    await waitFor(() => delivered().length === 60);
    expect(delivered()).toEqual(events.map((event) => event.id));
  });

  it('relays the events written before the shards, from their one partition, in order with the others', async () => {
    const [legacy, ...others] = eventsOf(3);
    // As the store wrote it before: in the one pending partition, without a shard.
    const { shard: _, ...item } = { ...outboxEntity.toItem(outboxItemOf(legacy!)), gsi1pk: 'OUTBOX#PENDING' };
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: item }));
    await transactWrite(outboxPutsOf(others));
    expect((await dynamoOutboxStore.pending(10)).map((event) => event.id)).toEqual([
      legacy!.id,
      ...others.map((e) => e.id),
    ]);

    const { delivery, delivered } = recording();
    relay(delivery);
    await waitFor(() => delivered().length === 3);
    expect(delivered()).toEqual([legacy!.id, ...others.map((event) => event.id)]);
    await waitFor(async () => (await outboxItem(legacy!))?.relayedAt !== undefined);
    expect(await outboxItem(legacy!)).not.toHaveProperty('gsi1pk');
  });

  it('marks an event once: marking a relayed event again changes nothing', async () => {
    const [event] = await written(1);
    await dynamoOutboxStore.markRelayed(event!, '2026-03-02T00:00:00.000Z');
    await dynamoOutboxStore.markRelayed(event!, '2026-03-03T00:00:00.000Z');
    expect(await outboxItem(event!)).toMatchObject({ relayedAt: '2026-03-02T00:00:00.000Z', version: 2 });
  });
});
