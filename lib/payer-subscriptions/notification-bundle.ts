import { Invalid } from '#lib/errors';
import { OUR_SYSTEMS } from '#lib/payer-api/pas/codes';

/*
 * A payer's notification as the R4 Subscriptions Backport sends it (docs/payer-api.md, "Notifications"): a
 * Bundle `type: history` whose first entry is a Parameters (SubscriptionStatus) with `subscription`, `type`,
 * `events-since-subscription-start` and, per event, a `notification-event` (`event-number`, `focus`); with
 * full-resource content the PAS Response Bundles follow. Only what the route acts on is read: the type, the
 * subscription named, the event's number, and the claims named by the identifier we gave them.
 */

export const NOTIFICATION_TYPES = ['handshake', 'heartbeat', 'event-notification', 'query-status'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** More claims than one notification may name: one event names one claim; a batch of them stays bounded. */
const MAX_CLAIMS_PER_NOTIFICATION = 100;

export interface ReadNotification {
  type: NotificationType;
  /** The payer's Subscription id the body names (`Subscription/<id>`, absolute or versioned too). */
  payerSubscriptionId: string | undefined;
  /** An event's number: its highest `event-number`, else `events-since-subscription-start`. */
  eventNumber: number | undefined;
  /** Claim identifiers of our claim system, distinct, as the ClaimResponses and the events' focus name them. */
  claimIdentifiers: string[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const arrayOf = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);

const refused = (reason: string, message: string) =>
  new Invalid(`Not a subscription notification: ${message}.`, { reason });

const partsNamed = (parameters: Json, name: string) =>
  arrayOf(parameters.parameter ?? parameters.part).filter((part) => part.name === name);

/** A part's value, whichever `value[x]` the payer chose. */
const partValue = (part: Json | undefined): unknown =>
  part && Object.entries(part).find(([key]) => key.startsWith('value'))?.[1];

const COUNT = /^(0|[1-9]\d{0,14})$/;

/** A count as the backport writes it (valueString of an integer; an integer type is taken too). */
const countOf = (value: unknown, what: string): number | undefined => {
  if (value === undefined) return undefined;
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !COUNT.test(text)) throw refused('invalid_event_number', `${what} is not a count`);
  return Number(text);
};

const SUBSCRIPTION_REFERENCE = /(?:^|\/)Subscription\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/]+)?$/;

const payerSubscriptionIdOf = (status: Json): string | undefined => {
  const reference = partValue(partsNamed(status, 'subscription')[0]);
  const text = isObject(reference) ? reference.reference : undefined;
  if (text === undefined) return undefined;
  const match = typeof text === 'string' ? SUBSCRIPTION_REFERENCE.exec(text) : null;
  if (!match) throw refused('invalid_subscription', 'subscription is not a Subscription reference');
  return match[1];
};

/** Our claim identifier in an identifier (or a list of them), if it is one. */
const ourClaimIdentifiers = (identifiers: unknown): string[] =>
  (Array.isArray(identifiers) ? identifiers : [identifiers])
    .filter(isObject)
    .filter((identifier) => identifier.system === OUR_SYSTEMS.claim && typeof identifier.value === 'string')
    .map((identifier) => identifier.value as string);

/** The ClaimResponses of the entries: each one itself, or in a PAS Response Bundle. */
const claimResponsesOf = (entries: Json[]): Json[] =>
  entries.flatMap(({ resource }) => {
    if (!isObject(resource)) return [];
    if (resource.resourceType === 'ClaimResponse') return [resource];
    if (resource.resourceType !== 'Bundle') return [];
    return arrayOf(resource.entry)
      .map((entry) => entry.resource)
      .filter((inner): inner is Json => isObject(inner) && inner.resourceType === 'ClaimResponse');
  });

function claimIdentifiersOf(events: Json[], entries: Json[]): string[] {
  const fromFocus = events.flatMap((event) => {
    const focus = partValue(partsNamed(event, 'focus')[0]);
    return isObject(focus) ? ourClaimIdentifiers(focus.identifier) : [];
  });
  const fromResponses = claimResponsesOf(entries).flatMap((response) => [
    ...ourClaimIdentifiers(response.identifier),
    ...(isObject(response.request) ? ourClaimIdentifiers(response.request.identifier) : []),
  ]);
  const distinct = [...new Set([...fromFocus, ...fromResponses])].filter((value) => value.length <= 128);
  if (distinct.length > MAX_CLAIMS_PER_NOTIFICATION) {
    throw refused('too_many_claims', `it names more than ${MAX_CLAIMS_PER_NOTIFICATION} claims`);
  }
  return distinct;
}

function eventNumberOf(status: Json, events: Json[]): number | undefined {
  const numbers = events.map((event) => countOf(partValue(partsNamed(event, 'event-number')[0]), 'event-number'));
  const highest = numbers.reduce<number | undefined>(
    (max, n) => (n === undefined ? max : Math.max(max ?? n, n)),
    undefined,
  );
  const since = countOf(
    partValue(partsNamed(status, 'events-since-subscription-start')[0]),
    'events-since-subscription-start',
  );
  return highest ?? since;
}

/** Reads a notification; a body that is not one is refused (400) with a reason code, never its content. */
export function readNotification(body: unknown): ReadNotification {
  if (!isObject(body) || body.resourceType !== 'Bundle' || body.type !== 'history') {
    throw refused('not_a_notification', 'the body is not a history Bundle');
  }
  const entries = arrayOf(body.entry);
  const status = entries[0]?.resource;
  if (!isObject(status) || status.resourceType !== 'Parameters') {
    throw refused('not_a_notification', 'its first entry is not a SubscriptionStatus Parameters');
  }
  const type = partValue(partsNamed(status, 'type')[0]);
  if (!NOTIFICATION_TYPES.includes(type as NotificationType)) {
    throw refused('invalid_type', 'type is none of handshake, heartbeat, event-notification, query-status');
  }
  const events = partsNamed(status, 'notification-event');
  return {
    type: type as NotificationType,
    payerSubscriptionId: payerSubscriptionIdOf(status),
    eventNumber: type === 'event-notification' ? eventNumberOf(status, events) : undefined,
    claimIdentifiers: type === 'event-notification' ? claimIdentifiersOf(events, entries.slice(1)) : [],
  };
}
