import { randomUUID } from 'node:crypto';
import type { Bundle, Parameters, ParametersParameter } from '@medplum/fhirtypes';
import { BACKPORT, PAS_TOPIC } from './subscription-resource.ts';

/*
 * What the payer sends a subscriber, as the R4 Subscriptions Backport shapes it: a Bundle of type history whose
 * first entry is the SubscriptionStatus (a Parameters: subscription, topic, status, type, the events since the
 * subscription started, and per event its number, time and focus), then, for an event with full-resource
 * content, the PAS Response Bundle it is about (PAS spec-61). `$status` answers the Parameters alone.
 */
export type NotificationType = 'handshake' | 'heartbeat' | 'event-notification' | 'query-status';
export type SubscriptionState = 'requested' | 'active' | 'error' | 'off';

export interface StatusInput {
  subscriptionId: string;
  status: SubscriptionState;
  type: NotificationType;
  eventsSinceStart: number;
}

/** An event: its number and time, and the PAS Response Bundle it carries. */
export interface NotificationEvent {
  number: number;
  timestamp: string;
  response: Bundle;
}

const STATUS_PROFILE = `${BACKPORT}backport-subscription-status-r4`;
const NOTIFICATION_PROFILE = `${BACKPORT}backport-subscription-notification-r4`;

/** The SubscriptionStatus, with the events it notifies (their focus, the Bundle's fullUrl in the notification). */
export function subscriptionStatus(
  input: StatusInput,
  events: { number: number; timestamp: string; focus: string }[] = [],
): Parameters {
  const parameter: ParametersParameter[] = [
    { name: 'subscription', valueReference: { reference: `Subscription/${input.subscriptionId}` } },
    { name: 'topic', valueCanonical: PAS_TOPIC },
    { name: 'status', valueCode: input.status },
    { name: 'type', valueCode: input.type },
    { name: 'events-since-subscription-start', valueString: String(input.eventsSinceStart) },
    ...events.map((event) => ({
      name: 'notification-event',
      part: [
        { name: 'event-number', valueString: String(event.number) },
        { name: 'timestamp', valueInstant: event.timestamp },
        { name: 'focus', valueReference: { reference: event.focus } },
      ],
    })),
  ];
  return { resourceType: 'Parameters', id: randomUUID(), meta: { profile: [STATUS_PROFILE] }, parameter };
}

/** A notification Bundle: the status, then (for an event) the PAS Response Bundle, each entry as history has it. */
export function notificationBundle(
  fhirBaseUrl: string,
  input: StatusInput,
  timestamp: string,
  event?: NotificationEvent,
): Bundle {
  const focus = event && { id: randomUUID(), bundle: event.response };
  const status = subscriptionStatus(
    input,
    event && focus ? [{ number: event.number, timestamp: event.timestamp, focus: `urn:uuid:${focus.id}` }] : [],
  );
  const history = { response: { status: '200' } };
  return {
    resourceType: 'Bundle',
    id: randomUUID(),
    meta: { profile: [NOTIFICATION_PROFILE] },
    type: 'history',
    timestamp,
    entry: [
      {
        fullUrl: `urn:uuid:${status.id}`,
        resource: status,
        request: { method: 'GET', url: `${fhirBaseUrl}/Subscription/${input.subscriptionId}/$status` },
        ...history,
      },
      ...(focus
        ? [
            {
              fullUrl: `urn:uuid:${focus.id}`,
              resource: { ...focus.bundle, id: focus.id },
              request: { method: 'GET' as const, url: `Bundle/${focus.id}` },
              ...history,
            },
          ]
        : []),
    ],
  };
}
