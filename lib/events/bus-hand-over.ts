import { PutEventsCommand, type PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import { eventBridge } from '#lib/aws/eventbridge';
import type { ServiceEvent } from '#lib/entities/service-event';
import { busEntryOf } from './bus-event.ts';
import type { EventHandOver } from './replay.ts';

/** Entries PutEvents takes in one call. */
export const PUT_EVENTS_BATCH = 10;
/** Calls per batch: the first, then again for the entries EventBridge refused (throttled, an internal failure). */
const PUT_ATTEMPTS = 3;
const RETRY_PAUSE_MS = 500;

type EventBridgeSender = { send(command: PutEventsCommand): Promise<Pick<PutEventsCommandOutput, 'Entries'>> };

/** The events of `batch` that PutEvents refused (its answer's entries are in the order of the request's). */
async function refusedOf(client: EventBridgeSender, batch: readonly ServiceEvent[]): Promise<ServiceEvent[]> {
  const { Entries = [] } = await client.send(new PutEventsCommand({ Entries: batch.map(busEntryOf) }));
  return batch.filter((_, i) => Entries[i]?.EventId === undefined);
}

/**
 * AWS: the events on the service-review bus, as the pipe puts them (busEntryOf), in batches of ten; an
 * entry EventBridge refuses is sent again twice, half a second apart, then reported. A call that fails
 * whole (no permission, no such bus) throws: the replay stops, and running it again is harmless.
 */
export const busHandOver = (client: EventBridgeSender = eventBridge, pauseMs = RETRY_PAUSE_MS): EventHandOver => ({
  via: 'event-bus',
  handOver: async (events) => {
    const refused: string[] = [];
    for (let i = 0; i < events.length; i += PUT_EVENTS_BATCH) {
      let batch = events.slice(i, i + PUT_EVENTS_BATCH);
      for (let attempt = 1; batch.length > 0 && attempt <= PUT_ATTEMPTS; attempt++) {
        if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        batch = await refusedOf(client, batch);
      }
      refused.push(...batch.map((event) => event.id));
    }
    return refused;
  },
});
