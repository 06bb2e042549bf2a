import type { EventType, ServiceEvent } from '#lib/entities/service-event';
import type { OutboxStore } from './outbox.ts';

/*
 * Replaying events (docs/events.md, "Replaying events"): the outbox items of one client, or of every
 * client, that occurred since a time are handed over again to what carries a new outbox item to delivery:
 * the event bus on AWS (bus-hand-over.ts, the detail as the pipe writes it), the local relay's pending
 * index on the local stack. Delivery records one delivery per event and subscription, whose webhook-id is
 * the event's id, so a replay sends only what never reached delivery and a receiver can de-duplicate
 * anything else. The summary holds counts and event ids only: never an event's data.
 */

/** Where replayed events go, as a new outbox item's would. */
export interface EventHandOver {
  /** `event-bus` (AWS) or `local-relay`: said in the summary. */
  readonly via: string;
  /** Hands `events` over; the ids of those it could not. */
  handOver(events: readonly ServiceEvent[]): Promise<string[]>;
}

/** The local stack: back among the relay's pending items, which it hands to its delivery (relay.ts). */
export const relayHandOver = (
  outbox: Pick<OutboxStore, 'markPending'>,
  now: () => Date = () => new Date(),
): EventHandOver => ({
  via: 'local-relay',
  handOver: async (events) => {
    const gone: string[] = [];
    for (const event of events) {
      // Gone: its TTL deleted it between the read and now.
      if (!(await outbox.markPending(event, now().toISOString()))) gone.push(event.id);
    }
    return gone;
  },
});

export interface ReplayRequest {
  /** ISO 8601, UTC (replaySinceOf): events that occurred at or after it. */
  since: string;
  /** The clients whose events are replayed: one, or the directory's every client. */
  clientIds: AsyncIterable<string> | Iterable<string>;
  /** Counts only: nothing is handed over. */
  dryRun: boolean;
}

export interface ReplaySummary {
  since: string;
  dryRun: boolean;
  via: string;
  /** Clients whose events were read. */
  clients: number;
  found: number;
  replayed: number;
  byType: Partial<Record<EventType, { found: number; replayed: number }>>;
  /** The events that could not be handed over (their ids): run the command again. */
  notReplayed: string[];
}

/** Reads each client's events since the time, page by page, and hands each page over (unless a dry run). */
export async function replayEvents(
  outbox: Pick<OutboxStore, 'since'>,
  handOver: EventHandOver,
  { since, clientIds, dryRun }: ReplayRequest,
): Promise<ReplaySummary> {
  const summary: ReplaySummary = {
    since,
    dryRun,
    via: handOver.via,
    clients: 0,
    found: 0,
    replayed: 0,
    byType: {},
    notReplayed: [],
  };
  for await (const clientId of clientIds) {
    summary.clients++;
    for await (const page of outbox.since(clientId, since)) {
      const refused = new Set(dryRun ? [] : await handOver.handOver(page));
      for (const event of page) count(summary, event, !dryRun && !refused.has(event.id));
    }
  }
  return summary;
}

/** One event found, and handed over or not (a dry run's are not, and are not missed either). */
function count(summary: ReplaySummary, event: ServiceEvent, handedOver: boolean) {
  const counts = summary.byType[event.type] ?? { found: 0, replayed: 0 };
  summary.byType[event.type] = counts;
  counts.found++;
  summary.found++;
  if (handedOver) {
    counts.replayed++;
    summary.replayed++;
  } else if (!summary.dryRun) {
    summary.notReplayed.push(event.id);
  }
}

const DURATION_UNITS_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/;

/** Whether year, month and day name a day of the calendar (Date.parse takes 2026-02-30 for 2026-03-02). */
const isCalendarDay = (year: string, month: string, day: string) => {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day);
};

/**
 * `--since`: a time in ISO 8601 with its zone (`2026-03-01T10:00:00Z`, `…+02:00`), a date (UTC midnight),
 * or a duration back from `now` in whole minutes, hours or days (`90m`, `6h`, `2d`); as ISO 8601 UTC with
 * milliseconds, the form of the keys it is compared with. A time to come, or anything else, is refused.
 */
export const replaySinceOf = (value: string, now: Date): string => {
  const refuse = (why: string) =>
    new Error(
      `--since takes a time (ISO 8601 with its zone, e.g. 2026-03-01T10:00:00Z, or a date, 2026-03-01) or a duration back from now (e.g. 90m, 6h, 2d): ${why}.`,
    );
  const duration = /^([1-9]\d{0,6})([mhd])$/.exec(value);
  if (duration) {
    return new Date(
      now.getTime() - Number(duration[1]) * DURATION_UNITS_MS[duration[2] as 'm' | 'h' | 'd'],
    ).toISOString();
  }
  const parts = DATE_TIME.exec(value);
  // A date-time needs its zone (the pattern's): without one, the time would be the operator's machine's.
  if (!parts || !isCalendarDay(parts[1]!, parts[2]!, parts[3]!)) {
    throw refuse(`"${value}" is neither`);
  }
  const at = Date.parse(parts[4] === undefined ? `${value}T00:00:00Z` : value);
  if (at > now.getTime()) throw refuse(`"${value}" is still to come`);
  return new Date(at).toISOString();
};
