import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { outboxEntity } from '#lib/entities/outbox';
import { EVENT_TYPES, type EventType, type ServiceEvent } from '#lib/entities/service-event';
import { TABLE_KEY } from '#lib/table';
import { EVENT_ID_PATTERN } from './events.ts';

/*
 * The events on the AWS event bus (docs/events.md, "On AWS"): the table's stream carries each new outbox
 * item to an EventBridge Pipe, which puts the item's event on the `service-review` bus; a rule queues it
 * for the delivery function, which reads it back here. The pipe's filter and template (infra/events-stack.ts)
 * and this reader are declared side by side so that they cannot drift apart.
 */

/** The custom event bus the outbox feeds (a name, so that it is the same in every stack that refers to it). */
export const EVENT_BUS_NAME = 'service-review';
/** The `source` of every event the pipe puts on the bus. */
export const EVENT_SOURCE = 'service-review.outbox';

/** Stream records of new outbox items only: a TTL deletion (REMOVE) or any other item never passes. */
export const outboxStreamFilter = {
  eventName: ['INSERT'],
  dynamodb: { Keys: { [TABLE_KEY.sort]: { S: [outboxEntity.keys.sk.render({})] } } },
};

/**
 * The pipe's target: `detail-type` is the event's type, `time` when it happened, and `detail` the
 * outbox item's `event` map as the stream holds it, in DynamoDB's attribute-value form. Pipes' input
 * templates only place JSON values; they cannot turn `{"S": "…"}` into `"…"`, nor a nested map with
 * numbers and nulls into plain JSON, so the reader unmarshalls it (`serviceEventOf`).
 */
export const pipeTarget = {
  detailType: '$.dynamodb.NewImage.type.S',
  time: '$.dynamodb.NewImage.occurredAt.S',
  inputTemplate: '<$.dynamodb.NewImage.event.M>',
} as const;

/** A PutEvents entry (@aws-sdk/client-eventbridge's PutEventsRequestEntry), as the replay puts an event on the bus. */
export interface BusEntry {
  EventBusName: string;
  Source: string;
  DetailType: string;
  Time: Date;
  Detail: string;
}

/**
 * `event` as the pipe puts it on the bus (pipeTarget): the same source, detail-type and time, and the
 * detail in the attribute-value form the stream holds (marshalled as the document client wrote the item:
 * lib/aws/dynamodb.ts), so the delivery function reads a replayed event as it reads a piped one.
 */
export const busEntryOf = (event: ServiceEvent): BusEntry => ({
  EventBusName: EVENT_BUS_NAME,
  Source: EVENT_SOURCE,
  DetailType: event.type,
  Time: new Date(event.occurredAt),
  Detail: JSON.stringify(marshall(event, { removeUndefinedValues: true })),
});

/** A bus event that is not one the pipe wrote. Says why, never what it held. */
export class MalformedBusEvent extends Error {
  override readonly name = 'MalformedBusEvent';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const eventId = new RegExp(EVENT_ID_PATTERN);

/** The ServiceEvent of an EventBridge event the pipe wrote (as a rule's SQS target delivers it: the message body). */
export const serviceEventOf = (body: string): ServiceEvent => {
  let busEvent: unknown;
  try {
    busEvent = JSON.parse(body);
  } catch {
    throw new MalformedBusEvent('The message is not JSON');
  }
  if (!isObject(busEvent) || busEvent.source !== EVENT_SOURCE) {
    throw new MalformedBusEvent(`The message is not an event of ${EVENT_SOURCE}`);
  }
  const type = busEvent['detail-type'];
  if (!EVENT_TYPES.includes(type as EventType)) throw new MalformedBusEvent('Unknown detail-type');
  if (!isObject(busEvent.detail)) throw new MalformedBusEvent('No detail');
  let event: Record<string, unknown>;
  try {
    event = unmarshall(busEvent.detail as Record<string, AttributeValue>);
  } catch {
    throw new MalformedBusEvent('The detail is not in attribute-value form');
  }
  if (
    event.type !== type ||
    typeof event.id !== 'string' ||
    !eventId.test(event.id) ||
    typeof event.clientId !== 'string' ||
    event.clientId === '' ||
    typeof event.occurredAt !== 'string' ||
    !isObject(event.data) ||
    (event.organizationId !== undefined && typeof event.organizationId !== 'string') ||
    (event.runOrganizationId !== undefined && typeof event.runOrganizationId !== 'string')
  ) {
    throw new MalformedBusEvent('The detail is not a service event');
  }
  return event as unknown as ServiceEvent;
};
