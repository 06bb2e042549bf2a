import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { handler as deliverWebhookEvents } from '#functions/webhooks/deliver-webhook-events';
import { dynamo } from '#lib/aws/dynamodb';
import { transactWrite } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import { outboxEntity } from '#lib/entities/outbox';
import { payloadOf, type ServiceEvent } from '#lib/entities/service-event';
import { clientEntity } from '#lib/entities/tenancy';
import { busHandOver } from '#lib/events/bus-hand-over';
import { dynamoOutboxStore, outboxPutsOf } from '#lib/events/dynamo-outbox-store';
import { newEvent } from '#lib/events/events';
import { outboxItemOf } from '#lib/events/outbox';
import { replayEvents } from '#lib/events/replay';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { call, newTenant } from '#test/support/api';
import { outboxItem } from './events-support.ts';
import { matchingSignatures, type Receiver, startReceiver } from './webhook-receiver-support.ts';

/*
 * replay-events (docs/events.md, "Replaying events"): events that never reached delivery (their item was
 * taken off the pending index, or the pipe dead-lettered their batch) are handed over again, by the real
 * CLI against the test stack (whose relay hands them to real webhook delivery) and by the AWS hand-over
 * (PutEvents, with a stand-in for EventBridge that queues each accepted entry to the real delivery
 * function as the bus's rule does). Delivery is once per event and subscription, under the event's id.
 */
const run = promisify(execFile);
const stateDir = mkdtempSync(join(tmpdir(), 'admin-cli-replay-'));
writeFileSync(join(stateDir, 'stack.json'), JSON.stringify({ env: inject('stackEnv') }));
const cli = (...args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env: { ...process.env, LOCAL_STATE_DIR: stateDir },
  });
const admin = async (...args: string[]) => {
  const { stdout } = await cli(...args);
  return { summary: JSON.parse(stdout), stdout };
};
const failureOf = (...args: string[]) =>
  cli(...args).then(
    () => expect.unreachable(`${args.join(' ')} should have failed`),
    (error) => ({ code: error.code as number, error: JSON.parse(error.stderr).error as string }),
  );

const webhooksPath = '/api/external/v1.1/Webhooks';
const receivers: Receiver[] = [];
afterAll(() => Promise.all(receivers.map((receiver) => receiver.close())));

/** A tenant with one subscription to automation.batch_finished at a receiver of its own. */
const subscribed = async (label: string) => {
  const tenant = await newTenant(label);
  const inbox = await startReceiver();
  receivers.push(inbox);
  const webhook = await subscribe(tenant.apiKey, inbox.url);
  return { ...tenant, inbox, webhook };
};
const subscribe = async (apiKey: string, url: string) => {
  const res = await call('POST', webhooksPath, { apiKey, body: { url, events: ['automation.batch_finished'] } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; secret: string };
};
const deliveredEventIds = async (apiKey: string, webhookId: string) => {
  const res = await call('GET', `${webhooksPath}/${webhookId}/deliveries`, { apiKey });
  expect(res.status, res.text).toBe(200);
  return (res.body.items as Array<{ eventId: string }>).map((delivery) => delivery.eventId).sort();
};

const batchFinished = (clientId: string) =>
  newEvent('automation.batch_finished', clientId, new Date().toISOString(), {
    batchId: crypto.randomUUID(),
    total: 1,
    counts: { succeeded: 1, failed: 0 },
  });

/** An outbox item the relay (or the pipe) took but whose event never reached delivery. */
const stranded = async (event: ServiceEvent, { indexed = true } = {}) => {
  const { gsi1pk, gsi1sk, gsi2pk, gsi2sk, ...item } = outboxEntity.toItem({
    ...outboxItemOf(event),
    relayedAt: event.occurredAt,
  });
  // Without gsi2: an item written before replay-events' index (the backfill's case).
  const Item = indexed ? { ...item, gsi2pk, gsi2sk } : item;
  await dynamo.send(new PutCommand({ TableName: tableName(), Item }));
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Until the stack's relay has handed the events over again (and marked them relayed). */
const relayed = async (...events: ServiceEvent[]) => {
  const until = Date.now() + 15_000;
  for (;;) {
    const items = await Promise.all(events.map(outboxItem));
    if (items.every((item) => item?.relayedAt !== undefined && item.gsi1pk === undefined)) return;
    if (Date.now() > until) throw new Error('the relay did not take the events');
    await sleep(50);
  }
};

describe('npm run admin -- replay-events (the local stack)', () => {
  it('delivers a stranded event once, under its id, and nothing twice however often it runs', async () => {
    const t = await subscribed('replay');
    const since = new Date().toISOString();
    const delivered = batchFinished(t.clientId);
    await transactWrite(outboxPutsOf([delivered]));
    const [first] = await t.inbox.waitFor(1);
    expect(first!.headers['webhook-id']).toBe(delivered.id);
    const lost = batchFinished(t.clientId);
    await stranded(lost);
    // A subscription made after the events: a replay is no reason to send it what happened before it.
    const late = await subscribe(t.apiKey, t.inbox.url);
    await sleep(300);
    expect(t.inbox.received).toHaveLength(1);

    const dry = await admin('replay-events', '--since', since, '--client', t.clientId, '--dry-run');
    const byType = (replayed: number) => ({ 'automation.batch_finished': { found: 2, replayed } });
    expect(dry.summary).toEqual({
      since,
      dryRun: true,
      via: 'local-relay',
      clients: 1,
      found: 2,
      replayed: 0,
      byType: byType(0),
      notReplayed: [],
    });
    expect((await outboxItem(lost))?.gsi1pk).toBeUndefined();

    for (const attempt of [1, 2]) {
      const { summary, stdout } = await admin('replay-events', '--since', since, '--client', t.clientId);
      expect(summary, `replay ${attempt}`).toMatchObject({ dryRun: false, found: 2, replayed: 2, notReplayed: [] });
      expect(summary.byType).toEqual(byType(2));
      // Ids and counts only: nothing of the events' data.
      for (const event of [delivered, lost]) expect(stdout).not.toContain(event.data.batchId);
      await relayed(delivered, lost);
      const [, replayed] = await t.inbox.waitFor(2);
      expect(replayed!.headers['webhook-id']).toBe(lost.id);
      expect(matchingSignatures(t.webhook.secret, replayed!)).toHaveLength(1);
      expect(JSON.parse(replayed!.body)).toEqual(payloadOf(lost));
      await sleep(300);
      expect(t.inbox.received, `replay ${attempt}`).toHaveLength(2);
      expect(await deliveredEventIds(t.apiKey, t.webhook.id)).toEqual([delivered.id, lost.id].sort());
      expect(await deliveredEventIds(t.apiKey, late.id)).toEqual([]);
    }
  });

  it("reads every client's events through the client directory, and the backfill indexes older items", async () => {
    const old = await newTenant('replay-old');
    const since = new Date().toISOString();
    const event = batchFinished(old.clientId);
    await stranded(event, { indexed: false });
    // A client created before the directory: its item lacks the directory's keys.
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: clientEntity.key({ clientId: old.clientId }),
        UpdateExpression: 'REMOVE gsi1pk, gsi1sk',
      }),
    );
    const directory = async () => {
      const ids: string[] = [];
      for await (const clientId of dynamoTenantStore.clientIds()) ids.push(clientId);
      return ids;
    };
    expect(await directory()).not.toContain(old.clientId);
    const found = async () =>
      (await admin('replay-events', '--since', since, '--client', old.clientId, '--dry-run')).summary.found;
    expect(await found()).toBe(0);

    const { summary } = await admin('backfill-replay-indexes');
    expect(summary.eventsIndexed).toBeGreaterThanOrEqual(1);
    expect(summary.clientsIndexed).toBeGreaterThanOrEqual(1);
    expect(await directory()).toContain(old.clientId);
    expect(await found()).toBe(1);
    // Every client: this one's event among the others' (other test files write theirs meanwhile).
    const all = (await admin('replay-events', '--since', since, '--dry-run')).summary;
    expect(all.clients).toBeGreaterThanOrEqual(2);
    expect(all.found).toBeGreaterThanOrEqual(1);
  });

  it('refuses a bad --since, a missing one, an unknown client, and the options elsewhere, exiting 1', async () => {
    for (const since of ['2026-02-30', '2999-01-01T00:00:00Z']) {
      const failure = await failureOf('replay-events', '--since', since);
      expect(failure.code, since).toBe(1);
      expect(failure.error, since).toMatch(/^--since takes a time \(ISO 8601 with its zone/);
    }
    expect(await failureOf('replay-events')).toEqual({
      code: 1,
      error: expect.stringMatching(/^replay-events takes --since <time>/),
    });
    expect(await failureOf('replay-events', '--since')).toEqual({
      code: 1,
      error: expect.stringMatching(/^--since takes a time or a duration/),
    });
    expect(await failureOf('replay-events', '--since', '1h', '--client', 'no-such-client')).toEqual({
      code: 1,
      error: 'Unknown client no-such-client',
    });
    expect((await failureOf('replay-events', 'extra', '--since', '1h')).error).toMatch(
      /^replay-events takes 0 argument/,
    );
    expect((await failureOf('list-payer-endpoints', '--dry-run')).error).toMatch(/takes no --since or --dry-run/);
    expect((await failureOf('list-payer-endpoints', '--since', '1h')).error).toMatch(/takes no --since or --dry-run/);
  });
});

describe('replay on AWS: PutEvents on the bus, as the pipe puts the outbox item', () => {
  /** EventBridge as far as replay needs it: each entry accepted goes, through the rule's queue, to the delivery function. */
  const eventBridge = () => {
    const entries: string[] = [];
    return {
      entries,
      send: async (command: PutEventsCommand) => {
        const Records = (command.input.Entries ?? []).map((entry) => {
          entries.push(entry.DetailType!);
          const body = {
            version: '0',
            id: crypto.randomUUID(),
            'detail-type': entry.DetailType,
            source: entry.Source,
            account: '123456789012',
            time: entry.Time!.toISOString(),
            region: 'us-east-1',
            resources: [],
            detail: JSON.parse(entry.Detail!),
          };
          return { messageId: crypto.randomUUID(), body: JSON.stringify(body) };
        });
        const { batchItemFailures } = await deliverWebhookEvents({ Records } as SQSEvent);
        expect(batchItemFailures).toEqual([]);
        return { Entries: Records.map(() => ({ EventId: crypto.randomUUID() })) };
      },
    };
  };

  it('reaches the receiver under the event id, and a second replay records and sends nothing more', async () => {
    const t = await subscribed('replay-bus');
    const since = new Date().toISOString();
    const lost = batchFinished(t.clientId);
    await stranded(lost);
    const bus = eventBridge();
    for (const attempt of [1, 2]) {
      const summary = await replayEvents(dynamoOutboxStore, busHandOver(bus, 0), {
        since,
        clientIds: [t.clientId],
        dryRun: false,
      });
      expect(summary, `replay ${attempt}`).toMatchObject({ via: 'event-bus', found: 1, replayed: 1 });
      const [delivery] = await t.inbox.waitFor(1);
      expect(delivery!.headers['webhook-id']).toBe(lost.id);
      expect(matchingSignatures(t.webhook.secret, delivery!)).toHaveLength(1);
      await sleep(200);
      expect(t.inbox.received).toHaveLength(1);
      expect(await deliveredEventIds(t.apiKey, t.webhook.id)).toEqual([lost.id]);
    }
    expect(bus.entries).toEqual(['automation.batch_finished', 'automation.batch_finished']);
  });
});
