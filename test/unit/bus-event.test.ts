import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { outboxEntity } from '#lib/entities/outbox';
import type { ServiceEvent } from '#lib/entities/service-event';
import {
  busEntryOf,
  EVENT_BUS_NAME,
  EVENT_SOURCE,
  MalformedBusEvent,
  outboxStreamFilter,
  pipeTarget,
  serviceEventOf,
} from '#lib/events/bus-event';
import { newEvent } from '#lib/events/events';
import { outboxItemOf } from '#lib/events/outbox';
import { deliverAllDue } from '#lib/webhooks/sweep';

/*
 * The pipe's side of the bus (infra/events-stack.ts) and the delivery function's reader agree: an outbox
 * item as the table's stream carries it, filtered and templated as EventBridge Pipes does (emulated
 * below: AWS itself), is read back as the very event the store wrote.
 */

/** A stream record of `item` (NEW_IMAGE), as DynamoDB Streams writes it. */
const streamRecord = (eventName: 'INSERT' | 'MODIFY' | 'REMOVE', item: Record<string, unknown>) => ({
  eventID: '1',
  eventName,
  eventSource: 'aws:dynamodb',
  dynamodb: {
    Keys: marshall({ pk: item.pk, sk: item.sk }),
    ...(eventName === 'REMOVE' ? {} : { NewImage: marshall(item, { removeUndefinedValues: true }) }),
    StreamViewType: 'NEW_IMAGE',
  },
});

const valueAt = (record: unknown, path: string) =>
  path
    .replace(/^\$\./, '')
    .split('.')
    .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], record);

/** EventBridge's event-pattern match, for the forms the filter uses: nested objects ending in lists of allowed values. */
const matches = (pattern: Record<string, unknown>, value: unknown): boolean =>
  Object.entries(pattern).every(([key, allowed]) => {
    const actual = (value as Record<string, unknown> | undefined)?.[key];
    return Array.isArray(allowed) ? allowed.includes(actual) : matches(allowed as Record<string, unknown>, actual);
  });

/** What the pipe puts on the bus for a record, and what the rule's SQS target then holds as a message body. */
const busMessageOf = (record: ReturnType<typeof streamRecord>) => {
  // A template that is one `<$.path>` is replaced by the JSON value at that path.
  const detail = valueAt(record, /^<(.+)>$/.exec(pipeTarget.inputTemplate)![1]!);
  return JSON.stringify({
    version: '0',
    id: crypto.randomUUID(),
    'detail-type': valueAt(record, pipeTarget.detailType),
    source: EVENT_SOURCE,
    account: '123456789012',
    time: valueAt(record, pipeTarget.time),
    region: 'us-east-1',
    resources: [],
    detail,
  });
};

const at = '2026-03-01T10:00:00.000Z';
const events: ServiceEvent[] = [
  newEvent('authorization.status_changed', 'client-1', at, {
    requestExternalId: 'REQ-1',
    previous: { status: 'pending', number: null, decisionDate: null },
    current: { status: 'approved', number: 'AUTH-9', decisionDate: '2026-03-01' },
    runId: null,
    items: [],
    reasonCodes: [],
  }),
  newEvent(
    'automation.run_finished',
    'client-1',
    at,
    {
      requestExternalId: 'REQ-1',
      runId: crypto.randomUUID(),
      kind: 'check-auth-status',
      outcome: 'status_read',
      batchId: null,
    },
    'org-7',
  ),
  newEvent('automation.batch_finished', 'client-2', at, {
    batchId: crypto.randomUUID(),
    total: 3,
    counts: { succeeded: 2, failed: 1 },
  }),
  newEvent('webhook.test', 'client-2', at, { webhookId: crypto.randomUUID() }),
];

describe('the outbox on the event bus', () => {
  it.each(events)('passes a new outbox item of $type and reads back the event the store wrote', (event) => {
    const record = streamRecord('INSERT', outboxEntity.toItem(outboxItemOf(event)));
    expect(matches(outboxStreamFilter, record)).toBe(true);
    const body = busMessageOf(record);
    expect(JSON.parse(body)).toMatchObject({ 'detail-type': event.type, time: event.occurredAt });
    expect(serviceEventOf(body)).toEqual(event);
  });

  it.each(events)('puts a replayed $type on the bus exactly as the pipe puts the outbox item', (event) => {
    const piped = JSON.parse(busMessageOf(streamRecord('INSERT', outboxEntity.toItem(outboxItemOf(event)))));
    const entry = busEntryOf(event);
    expect(entry).toMatchObject({ EventBusName: EVENT_BUS_NAME, Source: EVENT_SOURCE });
    // What EventBridge makes of a PutEvents entry, as the rule's SQS target holds it.
    const replayed = {
      ...piped,
      'detail-type': entry.DetailType,
      source: entry.Source,
      time: entry.Time.toISOString(),
      detail: JSON.parse(entry.Detail),
    };
    expect(replayed).toEqual(piped);
    expect(serviceEventOf(JSON.stringify(replayed))).toEqual(event);
  });

  it('filters out everything but inserts of outbox items: updates, TTL deletions, other items', () => {
    const item = outboxEntity.toItem(outboxItemOf(events[0]!));
    expect(matches(outboxStreamFilter, streamRecord('MODIFY', item))).toBe(false);
    expect(matches(outboxStreamFilter, streamRecord('REMOVE', item))).toBe(false);
    expect(matches(outboxStreamFilter, streamRecord('INSERT', { ...item, sk: 'REQUEST' }))).toBe(false);
    expect(outboxStreamFilter).toEqual({ eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: ['OUTBOX'] } } } });
  });

  it('refuses a message that is not an event the pipe wrote, saying why but never what it held', () => {
    const good = JSON.parse(busMessageOf(streamRecord('INSERT', outboxEntity.toItem(outboxItemOf(events[2]!)))));
    const refused = (body: string) => {
      try {
        serviceEventOf(body);
      } catch (error) {
        expect(error).toBeInstanceOf(MalformedBusEvent);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused('not json')).toBe('The message is not JSON');
    expect(refused(JSON.stringify({ ...good, source: 'someone.else' }))).toMatch(/not an event of/);
    expect(refused(JSON.stringify({ ...good, 'detail-type': 'order.created' }))).toBe('Unknown detail-type');
    expect(refused(JSON.stringify({ ...good, 'detail-type': 'webhook.test' }))).toBe(
      'The detail is not a service event',
    );
    expect(refused(JSON.stringify({ ...good, detail: null }))).toBe('No detail');
    // Plain JSON where the pipe puts attribute values: refused, not half-read.
    expect(refused(JSON.stringify({ ...good, detail: events[2] }))).toMatch(/attribute-value form|not a service event/);
    expect(refused(JSON.stringify({ ...good, detail: { ...good.detail, id: { S: 'evt_1' } } }))).toBe(
      'The detail is not a service event',
    );
    const withoutClient = { ...good.detail };
    delete withoutClient.clientId;
    expect(refused(JSON.stringify({ ...good, detail: withoutClient }))).toBe('The detail is not a service event');
    for (const message of ['not json', JSON.stringify({ ...good, source: 'x' })]) {
      expect(refused(message)).not.toContain(good.detail.clientId.S);
    }
  });
});

describe('deliverAllDue (the sweep)', () => {
  const batches = (...sizes: number[]) => {
    const calls: number[] = [];
    return {
      calls,
      delivery: {
        deliverDue: async () => {
          calls.push(calls.length);
          return sizes[calls.length - 1] ?? 0;
        },
      },
    };
  };

  it('takes batches until one sends nothing, and counts what it sent', async () => {
    const { delivery, calls } = batches(25, 25, 3);
    expect(await deliverAllDue(delivery)).toBe(53);
    expect(calls).toHaveLength(4);
  });

  it('stops taking batches once `more` says so (an invocation running out of time)', async () => {
    const { delivery, calls } = batches(25, 25, 25);
    let left = 2;
    expect(await deliverAllDue(delivery, () => --left > 0)).toBe(50);
    expect(calls).toHaveLength(2);
  });
});
