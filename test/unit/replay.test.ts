import type { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { describe, expect, it } from 'vitest';
import type { ServiceEvent } from '#lib/entities/service-event';
import { busEntryOf } from '#lib/events/bus-event';
import { busHandOver, PUT_EVENTS_BATCH } from '#lib/events/bus-hand-over';
import { newEvent } from '#lib/events/events';
import { type EventHandOver, replayEvents, replaySinceOf } from '#lib/events/replay';

/*
 * replay-events' parts that need no table (the store's Query and the relay's hand-over run against the
 * local stack in test/integration/admin-cli-replay.test.ts): the --since argument, the summary, and the
 * AWS hand-over's batching and retries against a stand-in for EventBridge (not served locally).
 */
const now = new Date('2026-03-08T12:00:00.000Z');

describe('replaySinceOf (--since)', () => {
  it.each([
    ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T10:00Z', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T10:00:00.5+02:00', '2026-03-01T08:00:00.500Z'],
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-02-28T23:59:59.999-05:00', '2026-03-01T04:59:59.999Z'],
    ['90m', '2026-03-08T10:30:00.000Z'],
    ['6h', '2026-03-08T06:00:00.000Z'],
    ['2d', '2026-03-06T12:00:00.000Z'],
  ])('takes %s as %s (UTC, with milliseconds: the keys’ form)', (given, expected) => {
    expect(replaySinceOf(given, now)).toBe(expected);
  });

  it.each([
    ['', 'neither'],
    ['yesterday', 'neither'],
    ['2026-03-01T10:00:00', 'neither'], // no zone: the operator's machine's time would be a guess
    ['2026-02-30', 'neither'], // Date.parse would take it for 2 March
    ['2026-13-01T00:00:00Z', 'neither'],
    ['2026-03-01T24:00:00Z', 'neither'],
    ['1772359200', 'neither'],
    ['0h', 'neither'],
    ['6 h', 'neither'],
    ['-6h', 'neither'],
    ['2026-03-09T00:00:00Z', 'still to come'],
  ])('refuses %j, saying what it takes', (given, why) => {
    expect(() => replaySinceOf(given, now)).toThrow(
      /^--since takes a time \(ISO 8601 with its zone.*duration back from now/,
    );
    expect(() => replaySinceOf(given, now)).toThrow(why);
  });
});

const batchFinished = (clientId: string, i: number) =>
  newEvent('automation.batch_finished', clientId, new Date(now.getTime() - 60_000 + i).toISOString(), {
    batchId: `batch-${i}`,
    total: 1,
    counts: { succeeded: 1, failed: 0 },
  });
const runFinished = (clientId: string, i: number) =>
  newEvent('automation.run_finished', clientId, new Date(now.getTime() - 60_000 + i).toISOString(), {
    requestExternalId: `REQ-SECRET-${i}`,
    runId: `run-${i}`,
    kind: 'check-auth-status',
    outcome: 'status_read',
    batchId: null,
  });

/** A client's events, in pages of two, as the store's Query gives them. */
const outboxOf = (events: Record<string, ServiceEvent[]>) => ({
  since: async function* (clientId: string, since: string) {
    const mine = (events[clientId] ?? []).filter((event) => event.occurredAt >= since);
    for (let i = 0; i < mine.length; i += 2) yield mine.slice(i, i + 2);
  },
});

const recordingHandOver = (refuse: (event: ServiceEvent) => boolean = () => false) => {
  const handed: string[] = [];
  const handOver: EventHandOver = {
    via: 'test',
    handOver: async (events) => {
      handed.push(...events.map((event) => event.id));
      return events.filter(refuse).map((event) => event.id);
    },
  };
  return { handOver, handed };
};

describe('replayEvents', () => {
  const events = {
    a: [batchFinished('a', 1), runFinished('a', 2), runFinished('a', 3)],
    b: [runFinished('b', 4)],
  };

  it('hands every client’s events over, page by page, and counts them by type, with ids only', async () => {
    const { handOver, handed } = recordingHandOver((event) => event.id === events.a[2]!.id);
    const summary = await replayEvents(outboxOf(events), handOver, {
      since: '2026-03-01T00:00:00.000Z',
      clientIds: ['a', 'b', 'c'],
      dryRun: false,
    });
    expect(handed).toEqual([...events.a, ...events.b].map((event) => event.id));
    expect(summary).toEqual({
      since: '2026-03-01T00:00:00.000Z',
      dryRun: false,
      via: 'test',
      clients: 3,
      found: 4,
      replayed: 3,
      byType: {
        'automation.batch_finished': { found: 1, replayed: 1 },
        'automation.run_finished': { found: 3, replayed: 2 },
      },
      notReplayed: [events.a[2]!.id],
    });
    expect(JSON.stringify(summary)).not.toMatch(/REQ-SECRET|run-\d|batch-\d/);
  });

  it('reads from the directory as it goes (an async list), and a dry run hands nothing over', async () => {
    const { handOver, handed } = recordingHandOver();
    const directory = async function* () {
      yield 'a';
      yield 'b';
    };
    const summary = await replayEvents(outboxOf(events), handOver, {
      since: events.a[1]!.occurredAt,
      clientIds: directory(),
      dryRun: true,
    });
    expect(handed).toEqual([]);
    expect(summary).toMatchObject({ dryRun: true, clients: 2, found: 3, replayed: 0, notReplayed: [] });
    expect(summary.byType).toEqual({ 'automation.run_finished': { found: 3, replayed: 0 } });
  });
});

describe('busHandOver (AWS: PutEvents on the service-review bus)', () => {
  /** EventBridge's answer per entry: refused (ThrottlingException) while `refuse` says so. */
  const eventBridge = (refuse: (eventId: string, call: number) => boolean) => {
    const calls: Array<Array<{ DetailType?: string; Detail?: string; EventBusName?: string }>> = [];
    return {
      calls,
      send: async (command: PutEventsCommand) => {
        const entries = command.input.Entries ?? [];
        calls.push(entries);
        return {
          Entries: entries.map((entry) => {
            const id = JSON.parse(entry.Detail!).id.S as string;
            return refuse(id, calls.length)
              ? { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }
              : { EventId: crypto.randomUUID() };
          }),
        };
      },
    };
  };
  const many = Array.from({ length: 23 }, (_, i) => batchFinished('a', i));

  it('puts the events as the pipe does, ten an entry list, and sends refused entries again', async () => {
    const flaky = many[12]!.id;
    const client = eventBridge((id, call) => id === flaky && call < 4);
    expect(await busHandOver(client, 0).handOver(many)).toEqual([]);
    expect(client.calls.map((entries) => entries.length)).toEqual([PUT_EVENTS_BATCH, PUT_EVENTS_BATCH, 1, 1, 3]);
    expect(client.calls[0]![0]).toEqual(busEntryOf(many[0]!));
    expect(client.calls[2]).toEqual([busEntryOf(many[12]!)]);
  });

  it('reports the ids of the entries still refused after three calls', async () => {
    const stuck = new Set([many[3]!.id, many[21]!.id]);
    const client = eventBridge((id) => stuck.has(id));
    expect(await busHandOver(client, 0).handOver(many)).toEqual([...stuck]);
    expect(client.calls.map((entries) => entries.length)).toEqual([10, 1, 1, 10, 3, 1, 1]);
  });
});
