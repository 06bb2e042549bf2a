import { describe, expect, it } from 'vitest';
import { type BackportSubscription, subscriptionTerms } from '#local/pas-payer/subscription-resource';

/** The local PAS payer's reading of a PAS Subscription (local/pas-payer/subscription-resource.ts), beyond base R4. */
const BACKPORT = 'http://hl7.org/fhir/uv/subscriptions-backport/StructureDefinition/';
const NOW = new Date('2026-11-28T08:00:00Z');

const subscription = (
  filter: string,
  channel: Partial<BackportSubscription['channel']> = {},
): BackportSubscription => ({
  resourceType: 'Subscription',
  status: 'requested',
  end: '2026-12-05T08:00:00Z',
  reason: 'Pended results',
  criteria: 'http://hl7.org/fhir/us/davinci-pas/SubscriptionTopic/PASSubscriptionTopic',
  _criteria: { extension: [{ url: `${BACKPORT}backport-filter-criteria`, valueString: filter }] },
  channel: {
    type: 'rest-hook',
    endpoint: 'https://api.example.org/api/external/v1.1/Payers/notifications/abc',
    payload: 'application/fhir+json',
    _payload: { extension: [{ url: `${BACKPORT}backport-payload-content`, valueCode: 'full-resource' }] },
    header: ['Authorization: Bearer secret'],
    ...channel,
  },
});

const problemsOf = (resource: BackportSubscription, clientId = 'client-1') =>
  subscriptionTerms(resource, clientId, NOW, 'create').problems.map((problem) => [
    problem.code,
    problem.expression?.[0],
  ]);

describe('local PAS payer: a Subscription’s terms', () => {
  it('reads the org-identifier filter in its spellings, the heartbeat, the default timeout and the headers', () => {
    for (const filter of ['org-identifier=client-1', 'orgIdentifier=client-1', 'Claim?org-identifier=client-1']) {
      expect(subscriptionTerms(subscription(filter), 'client-1', NOW, 'create')).toMatchObject({ problems: [] });
    }
    const heartbeat = [{ url: `${BACKPORT}backport-heartbeat-period`, valueUnsignedInt: 300 }];
    expect(
      subscriptionTerms(subscription('org-identifier=client-1', { extension: heartbeat }), 'client-1', NOW, 'create'),
    ).toEqual({
      problems: [],
      terms: {
        orgIdentifiers: ['client-1'],
        endpoint: 'https://api.example.org/api/external/v1.1/Payers/notifications/abc',
        headers: ['Authorization: Bearer secret'],
        end: '2026-12-05T08:00:00.000Z',
        heartbeatPeriodSeconds: 300,
        timeoutSeconds: 10,
        reason: 'Pended results',
      },
    });
  });

  it('forbids a filter naming another organization, even beside the client’s own', () => {
    expect(problemsOf(subscription('org-identifier=client-1,client-2'))).toEqual([
      ['forbidden', 'Subscription.criteria'],
    ]);
    expect(problemsOf(subscription('org-identifier=client-2'))).toEqual([['forbidden', 'Subscription.criteria']]);
    expect(problemsOf(subscription('patient=Patient/1'))).toEqual([['invariant', 'Subscription.criteria']]);
  });

  it('refuses headers the payer sets itself or cannot send, bad heartbeats and plain http off loopback', () => {
    const header = (lines: string[]) => problemsOf(subscription('org-identifier=client-1', { header: lines }));
    expect(header(['Host: example.org'])).toEqual([['invariant', 'Subscription.channel.header']]);
    expect(header(['No colon here'])).toEqual([['invariant', 'Subscription.channel.header']]);
    expect(header(['X-Trace: a\r\nInjected: b'])).toEqual([['invariant', 'Subscription.channel.header']]);
    expect(header(Array.from({ length: 11 }, (_, index) => `X-${index}: v`))).toEqual([
      ['invariant', 'Subscription.channel.header'],
    ]);
    const heartbeat = (value: number) => [{ url: `${BACKPORT}backport-heartbeat-period`, valueUnsignedInt: value }];
    expect(problemsOf(subscription('org-identifier=client-1', { extension: heartbeat(0) }))).toEqual([
      ['invariant', 'Subscription.channel'],
    ]);
    for (const endpoint of ['http://api.example.org/hook', 'https://user:pw@api.example.org/hook', 'hook']) {
      expect(problemsOf(subscription('org-identifier=client-1', { endpoint }))).toEqual([
        ['invariant', 'Subscription.channel.endpoint'],
      ]);
    }
    expect(problemsOf(subscription('org-identifier=client-1', { endpoint: 'http://localhost:3000/hook' }))).toEqual([]);
  });
});
