import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OUR_SYSTEMS } from '#lib/payer-api/pas/codes';
import { readNotification } from '#lib/payer-subscriptions/notification-bundle';
import { presentsSecret } from '#lib/payer-subscriptions/notification-secret';

/*
 * Reading a payer's notification (R4 Subscriptions Backport) and checking its channel secret: what the route
 * acts on, and the refusals of what is not a notification (their reason codes, never the body's content).
 */

const ours = (value: string) => ({ system: OUR_SYSTEMS.claim, value });
const theirs = (value: string) => ({ system: 'urn:trnorg:9012345678', value });

const notification = (parameters: unknown[], more: unknown[] = []) => ({
  resourceType: 'Bundle',
  type: 'history',
  entry: [{ resource: { resourceType: 'Parameters', parameter: parameters } }, ...more],
});

const event = (number: string, focus: unknown) => ({
  name: 'notification-event',
  part: [
    { name: 'event-number', valueString: number },
    { name: 'focus', valueReference: focus },
  ],
});

const responseBundle = (...identifiers: unknown[]) => ({
  fullUrl: 'urn:uuid:b',
  resource: {
    resourceType: 'Bundle',
    type: 'collection',
    entry: identifiers.map((identifier) => ({ resource: { resourceType: 'ClaimResponse', identifier: [identifier] } })),
  },
});

describe('readNotification', () => {
  it('reads a heartbeat: its type and the payer subscription it names (relative, absolute or versioned)', () => {
    for (const reference of ['Subscription/s-1', 'https://payer.example/fhir/Subscription/s-1/_history/3']) {
      const body = notification([
        { name: 'subscription', valueReference: { reference } },
        { name: 'type', valueCode: 'heartbeat' },
        { name: 'events-since-subscription-start', valueString: '7' },
      ]);
      expect(readNotification(body)).toEqual({
        type: 'heartbeat',
        payerSubscriptionId: 's-1',
        eventNumber: undefined,
        claimIdentifiers: [],
      });
    }
  });

  it('reads an event: its highest event number, our claim identifiers from the responses and the focus, once each', () => {
    const body = notification(
      [
        { name: 'subscription', valueReference: { reference: 'Subscription/s-1' } },
        { name: 'type', valueCode: 'event-notification' },
        { name: 'events-since-subscription-start', valueString: '12' },
        event('11', { reference: 'urn:uuid:b' }),
        event('12', { identifier: ours('claim-2') }),
      ],
      [
        responseBundle(ours('claim-1'), theirs('TRN-1')),
        { resource: { resourceType: 'ClaimResponse', identifier: [ours('claim-1')] } },
      ],
    );
    expect(readNotification(body)).toEqual({
      type: 'event-notification',
      payerSubscriptionId: 's-1',
      eventNumber: 12,
      claimIdentifiers: ['claim-2', 'claim-1'],
    });
  });

  it('takes events-since-subscription-start when no notification-event numbers it', () => {
    const body = notification([
      { name: 'type', valueCode: 'event-notification' },
      { name: 'events-since-subscription-start', valueString: '3' },
    ]);
    expect(readNotification(body)).toMatchObject({ eventNumber: 3, payerSubscriptionId: undefined });
  });

  it.each([
    ['not a Bundle', { resourceType: 'Parameters' }, 'not_a_notification'],
    ['not a history Bundle', { resourceType: 'Bundle', type: 'collection', entry: [] }, 'not_a_notification'],
    [
      'no SubscriptionStatus first',
      { resourceType: 'Bundle', type: 'history', entry: [{ resource: {} }] },
      'not_a_notification',
    ],
    ['an unknown type', notification([{ name: 'type', valueCode: 'gossip' }]), 'invalid_type'],
    [
      'a reference to something else',
      notification([
        { name: 'type', valueCode: 'heartbeat' },
        { name: 'subscription', valueReference: { reference: 'Patient/p-1' } },
      ]),
      'invalid_subscription',
    ],
    [
      'an event number that is no count',
      notification([{ name: 'type', valueCode: 'event-notification' }, event('-1', {})]),
      'invalid_event_number',
    ],
    [
      'more than 100 claims',
      notification(
        [{ name: 'type', valueCode: 'event-notification' }],
        [responseBundle(...Array.from({ length: 101 }, (_, i) => ours(`claim-${i}`)))],
      ),
      'too_many_claims',
    ],
  ])('refuses %s (400, a reason code)', (_name, body, reason) => {
    expect(() => readNotification(body)).toThrow(expect.objectContaining({ kind: 'invalid', details: { reason } }));
  });
});

describe('presentsSecret', () => {
  const secret = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I';
  const hash = createHash('sha256').update(secret).digest('hex');

  it('holds for the Bearer secret whose SHA-256 is stored, and for nothing else', () => {
    expect(presentsSecret(`Bearer ${secret}`, hash)).toBe(true);
    expect(presentsSecret(`Bearer ${secret}x`, hash)).toBe(false);
    expect(presentsSecret(`Basic ${secret}`, hash)).toBe(false);
    expect(presentsSecret(secret, hash)).toBe(false);
    expect(presentsSecret(undefined, hash)).toBe(false);
    expect(presentsSecret('Bearer ', createHash('sha256').update('').digest('hex'))).toBe(false);
    expect(presentsSecret(`Bearer ${secret}`, 'not-hex')).toBe(false);
  });
});
