import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { transactWrite } from '#lib/aws/transactions';
import type { ServiceEvent } from '#lib/entities/service-event';
import { dynamoOutboxStore, outboxPutsOf } from '#lib/events/dynamo-outbox-store';
import type { EventDelivery } from '#lib/events/event-delivery';
import { newEvent } from '#lib/events/events';
import { type OutboxRelay, startOutboxRelay } from '#lib/events/relay';
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

/** `n` events, a second apart, written to the outbox as the stores write them. */
const written = async (n: number, clientId = 'client-relay') => {
  const events = Array.from({ length: n }, (_, i) => {
    clock += 1000;
    return newEvent('automation.batch_finished', clientId, new Date(clock).toISOString(), {
      batchId: crypto.randomUUID(),
      total: i + 1,
      counts: { succeeded: i + 1, failed: 0 },
    });
  });
  await transactWrite(outboxPutsOf(events));
  return events;
};

/** A delivery that records every hand-off, and whether the event was still pending when it was handed over. */
const recording = (behaviour: (event: ServiceEvent, attempt: number) => Promise<void> = async () => undefined) => {
  const attempts: Array<{ id: string; pendingDuringHandOff: boolean; ok: boolean }> = [];
  const delivery: EventDelivery = {
    deliver: async (event) => {
      const item = await outboxItem(event);
      const attempt = attempts.filter((seen) => seen.id === event.id).length + 1;
      const entry = { id: event.id, pendingDuringHandOff: item?.gsi1pk === 'OUTBOX#PENDING', ok: false };
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
    expect(await outboxItem(after!)).toMatchObject({ gsi1pk: 'OUTBOX#PENDING' });
  });

  it('marks an event once: marking a relayed event again changes nothing', async () => {
    const [event] = await written(1);
    await dynamoOutboxStore.markRelayed(event!, '2026-03-02T00:00:00.000Z');
    await dynamoOutboxStore.markRelayed(event!, '2026-03-03T00:00:00.000Z');
    expect(await outboxItem(event!)).toMatchObject({ relayedAt: '2026-03-02T00:00:00.000Z', version: 2 });
  });
});
