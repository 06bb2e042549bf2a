import { describe, expect, it } from 'vitest';
import type { StoredPayerSubscription } from '#lib/entities/payer-subscription';
import {
  keepsChannelHeader,
  notificationUrlOf,
  payerSubscriptionOf,
  reportedStatusOf,
  subscriptionResourceOf,
} from '#lib/payer-subscriptions/subscription-resource';
import { endAtFrom, heartbeatIsMissing, nextCheckOf, renewalIsDue } from '#lib/payer-subscriptions/subscription-timing';

/*
 * The PAS Subscription we send (the PAS profile over the R4 backport: PAS IG ClaimOperation.fsh, Examples.fsh
 * PASSubscriptionExample, specification.md "Subscription"), what we read of the payer's answers, and when the
 * keeper looks at a subscription again.
 */
const BACKPORT = 'http://hl7.org/fhir/uv/subscriptions-backport/StructureDefinition/';

describe('the PAS Subscription we POST', () => {
  it('is the PAS profile: the topic, our org-identifier, rest-hook to our route, full-resource, heartbeat, end, secret header', () => {
    const url = notificationUrlOf('https://api.example.org/', 'sub-1');
    expect(url).toBe('https://api.example.org/api/external/v1.1/Payers/notifications/sub-1');
    expect(
      subscriptionResourceOf({
        notificationUrl: url,
        secret: 's3cret',
        orgIdentifier: 'client-at-payer',
        endAt: '2026-12-05T08:00:00.000Z',
        heartbeatPeriodSeconds: 300,
      }),
    ).toEqual({
      resourceType: 'Subscription',
      meta: { profile: ['http://hl7.org/fhir/us/davinci-pas/StructureDefinition/profile-subscription'] },
      status: 'requested',
      end: '2026-12-05T08:00:00.000Z',
      reason: expect.any(String),
      criteria: 'http://hl7.org/fhir/us/davinci-pas/SubscriptionTopic/PASSubscriptionTopic',
      _criteria: {
        extension: [{ url: `${BACKPORT}backport-filter-criteria`, valueString: 'org-identifier=client-at-payer' }],
      },
      channel: {
        extension: [{ url: `${BACKPORT}backport-heartbeat-period`, valueUnsignedInt: 300 }],
        type: 'rest-hook',
        endpoint: url,
        payload: 'application/fhir+json',
        _payload: { extension: [{ url: `${BACKPORT}backport-payload-content`, valueCode: 'full-resource' }] },
        header: ['Authorization: Bearer s3cret'],
      },
    });
  });
});

describe("the payer's answers", () => {
  it('takes a Subscription with a FHIR id and a known status, nothing else', () => {
    const resource = { resourceType: 'Subscription', id: 'ps-1', status: 'requested' };
    expect(payerSubscriptionOf(resource)).toEqual({ id: 'ps-1', status: 'requested', resource });
    for (const body of [
      null,
      'Subscription',
      { ...resource, resourceType: 'Bundle' },
      { ...resource, id: '../Claim' },
      { ...resource, id: 'x'.repeat(65) },
      { ...resource, status: 'paused' },
      { ...resource, id: undefined },
    ]) {
      expect(payerSubscriptionOf(body)).toBeUndefined();
    }
  });

  it("reads $status's SubscriptionStatus, alone or first in a searchset Bundle", () => {
    const parameters = { resourceType: 'Parameters', parameter: [{ name: 'status', valueCode: 'error' }] };
    expect(reportedStatusOf(parameters)).toBe('error');
    expect(reportedStatusOf({ resourceType: 'Bundle', type: 'searchset', entry: [{ resource: parameters }] })).toBe(
      'error',
    );
    expect(reportedStatusOf({ resourceType: 'Parameters', parameter: [{ name: 'status', valueCode: 'gone' }] })).toBe(
      undefined,
    );
    expect(reportedStatusOf({ resourceType: 'OperationOutcome' })).toBeUndefined();
    expect(reportedStatusOf({ resourceType: 'Bundle', entry: [] })).toBeUndefined();
  });

  it('renews by PUT only a copy that still shows the channel header', () => {
    expect(keepsChannelHeader({ channel: { header: ['Authorization: Bearer x'] } })).toBe(true);
    expect(keepsChannelHeader({ channel: { type: 'rest-hook' } })).toBe(false);
    expect(keepsChannelHeader({})).toBe(false);
  });
});

describe('when the keeper looks again', () => {
  const now = new Date('2026-11-28T08:00:00.000Z');
  const subscription = (changes: Partial<StoredPayerSubscription>) =>
    ({
      createdAt: '2026-11-28T07:00:00.000Z',
      lastNotifiedAt: null,
      endAt: endAtFrom(now),
      heartbeatPeriodSeconds: 300,
      ...changes,
    }) as StoredPayerSubscription;

  it('asks for 7 days and renews when less than a day is left', () => {
    expect(endAtFrom(now)).toBe('2026-12-05T08:00:00.000Z');
    expect(renewalIsDue(subscription({ endAt: '2026-11-29T07:59:59.000Z' }), now)).toBe(true);
    expect(renewalIsDue(subscription({ endAt: '2026-11-29T08:00:00.000Z' }), now)).toBe(false);
  });

  it('counts a heartbeat missing after twice its period of silence (since the last notification, else the create)', () => {
    expect(heartbeatIsMissing(subscription({ lastNotifiedAt: '2026-11-28T07:50:01.000Z' }), now)).toBe(false);
    expect(heartbeatIsMissing(subscription({ lastNotifiedAt: '2026-11-28T07:49:59.000Z' }), now)).toBe(true);
    expect(heartbeatIsMissing(subscription({ createdAt: '2026-11-28T07:55:00.000Z' }), now)).toBe(false);
  });

  it('is due when a heartbeat would be missing (not sooner than a period), or at the renewal, the sooner', () => {
    expect(nextCheckOf(subscription({ lastNotifiedAt: '2026-11-28T07:58:00.000Z' }), now)).toBe(
      '2026-11-28T08:08:00.000Z',
    );
    // Silent already: asked again a period on, not at once.
    expect(nextCheckOf(subscription({}), now)).toBe('2026-11-28T08:05:00.000Z');
    expect(
      nextCheckOf(subscription({ lastNotifiedAt: '2026-11-28T07:59:00.000Z', endAt: '2026-11-29T08:06:00.000Z' }), now),
    ).toBe('2026-11-28T08:06:00.000Z');
  });
});
