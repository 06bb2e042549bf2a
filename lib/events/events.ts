import type { EventData, EventType, ServiceEvent } from '#lib/entities/service-event';
import { uuidv7 } from '#lib/ids';

/** An event id: `evt_` and a UUIDv7 (sorts by creation; the webhook-id of its deliveries). */
export const EVENT_ID_PATTERN = '^evt_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$';

/**
 * A new event of `clientId`'s, for a change that happened at `occurredAt` (ISO 8601); `organizationId`
 * routes it to that organization's restricted subscriptions too (never part of the payload).
 */
export const newEvent = <T extends EventType>(
  type: T,
  clientId: string,
  occurredAt: string,
  data: EventData[T],
  organizationId?: string,
): ServiceEvent<T> => ({
  id: `evt_${uuidv7(Date.parse(occurredAt))}`,
  type,
  clientId,
  ...(organizationId ? { organizationId } : {}),
  occurredAt,
  data,
});
