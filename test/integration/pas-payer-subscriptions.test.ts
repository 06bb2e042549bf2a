import type { Bundle, ClaimResponse, OperationOutcome, Parameters } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import { r4Errors } from '#local/pas-payer/fhir-validation';
import { type PasPayer, startPasPayer } from '#local/pas-payer/server';
import {
  notificationReceiver,
  PAS_TOPIC,
  pasSubscription,
  type SubscriptionOptions,
  statusOf,
} from './pas-payer-subscriptions-support.ts';
import { accessTokenAt, jwksServer, pasRequestBundle } from './pas-payer-support.ts';

/**
 * The local PAS payer's subscriptions over real HTTP: created by a client with a real token (signed
 * assertion), checked against the PAS Subscription profile, notified to a real receiver on loopback —
 * handshake, heartbeats, an event with the full PAS Response Bundle once the operator decides a pended claim.
 */
const PENDED = 'SBX-10003';

let payer: PasPayer;
let keys: Awaited<ReturnType<typeof jwksServer>>;
let receiver: Awaited<ReturnType<typeof notificationReceiver>>;
let clientA: string;
let clientB: string;

beforeAll(async () => {
  keys = await jwksServer();
  receiver = await notificationReceiver();
  payer = await startPasPayer();
  clientA = payer.registerClient({ jwksUri: keys.jwksUri, name: 'Organization A' });
  clientB = payer.registerClient({ jwksUri: keys.jwksUri, name: 'Organization B' });
});
afterAll(async () => {
  await payer?.close();
  await receiver?.close();
  await keys?.close();
});

const accessToken = (clientId: string) => accessTokenAt(payer, keys, clientId);

const call = async (method: string, path: string, token: string, body?: unknown, type = 'application/fhir+json') => {
  const response = await fetch(`${payer.fhirBaseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : null) as unknown };
};

/** A subscription created by the client, its handshake received at `path`; its id. */
async function subscribed(clientId: string, path: string, options: Partial<SubscriptionOptions> = {}) {
  const token = await accessToken(clientId);
  const created = await call(
    'POST',
    '/Subscription',
    token,
    pasSubscription({ endpoint: receiver.url(path), orgIdentifier: clientId, ...options }),
  );
  expect(created.status).toBe(201);
  const id = (created.body as { id: string }).id;
  await receiver.waitFor(path, 1, 'handshake');
  await expect.poll(() => payer.subscriptions().find((found) => found.id === id)?.status).toBe('active');
  return { id, token };
}

/** A pended claim of the client (member SBX-10003), then the operator's decision of it. */
async function pendedThenDecided(clientId: string, status = 'approved') {
  const token = await accessToken(clientId);
  const request = pasRequestBundle({ memberId: PENDED });
  const submitted = await fetch(`${payer.fhirBaseUrl}/Claim/$submit`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/fhir+json' },
    body: JSON.stringify(request),
  });
  const claimResponse = ((await submitted.json()) as Bundle).entry![0]!.resource as ClaimResponse;
  const decided = await fetch(`${payer.url}/operator/decisions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${payer.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ claimId: claimResponse.id, status }),
  });
  expect(decided.status).toBe(200);
  return { request, claimResponse };
}

describe('local PAS payer: creating a subscription', () => {
  it('answers 201 requested, then hands shake with the channel’s header and turns active', async () => {
    const token = await accessToken(clientA);
    const created = await call(
      'POST',
      '/Subscription',
      token,
      pasSubscription({ endpoint: receiver.url('/create'), orgIdentifier: clientA, secret: 's3cret-A' }),
    );
    expect(created.status).toBe(201);
    const subscription = created.body as { id: string; status: string; criteria: string };
    expect(subscription).toMatchObject({ resourceType: 'Subscription', status: 'requested', criteria: PAS_TOPIC });
    expect(created.headers.get('location')).toBe(`${payer.fhirBaseUrl}/Subscription/${subscription.id}`);
    expect(JSON.stringify(created.body)).not.toContain('s3cret-A');

    const [handshake] = await receiver.waitFor('/create', 1);
    expect(handshake!.headers.authorization).toBe('Bearer s3cret-A');
    expect(handshake!.headers['content-type']).toBe('application/fhir+json');
    expect(handshake!.body).toMatchObject({ resourceType: 'Bundle', type: 'history' });
    expect(statusOf(handshake!.body)).toEqual({
      subscription: `Subscription/${subscription.id}`,
      topic: PAS_TOPIC,
      status: 'requested',
      type: 'handshake',
      eventsSinceStart: '0',
      events: [],
    });
    expect(await r4Errors(handshake!.body, 1 << 20)).toEqual([]);
    await expect
      .poll(() => payer.subscriptions().find((found) => found.id === subscription.id))
      .toEqual({
        id: subscription.id,
        status: 'active',
        endpoint: receiver.url('/create'),
        eventsSinceStart: 0,
      });
    const read = await call('GET', `/Subscription/${subscription.id}`, token);
    expect([read.status, (read.body as { status: string }).status]).toEqual([200, 'active']);
  });

  it('refuses what the PAS Subscription profile does not allow, with the element’s path', async () => {
    const token = await accessToken(clientA);
    const valid = pasSubscription({ endpoint: receiver.url('/refused'), orgIdentifier: clientA });
    const refused = async (body: unknown, expression: string) => {
      const answer = await call('POST', '/Subscription', token, body);
      expect(answer.status, expression).toBe(400);
      expect((answer.body as OperationOutcome).issue.flatMap((issue) => issue.expression)).toContain(expression);
    };
    await refused({ ...valid, criteria: 'http://example.org/SubscriptionTopic/other' }, 'Subscription.criteria');
    await refused({ ...valid, _criteria: undefined }, 'Subscription.criteria');
    await refused(
      { ...valid, _criteria: { extension: [{ ...valid._criteria.extension[0], valueString: 'patient=123' }] } },
      'Subscription.criteria',
    );
    await refused({ ...valid, channel: { ...valid.channel, type: 'websocket' } }, 'Subscription.channel.type');
    await refused(
      { ...valid, channel: { ...valid.channel, endpoint: 'http://example.org/hook' } },
      'Subscription.channel.endpoint',
    );
    await refused(
      { ...valid, channel: { ...valid.channel, _payload: { extension: [] } } },
      'Subscription.channel.payload',
    );
    await refused(
      { ...valid, channel: { ...valid.channel, header: ['Content-Type: text/plain'] } },
      'Subscription.channel.header',
    );
    await refused({ ...valid, end: new Date(Date.now() - 1000).toISOString() }, 'Subscription.end');
    await refused({ ...valid, status: 'active' }, 'Subscription.status');
    await refused({ ...valid, unknownElement: true }, 'Subscription.unknownElement');
    expect((await call('POST', '/Subscription', token, valid, 'text/plain')).status).toBe(415);
    expect((await call('POST', '/Subscription', 'not-a-token', valid)).status).toBe(401);
    expect(receiver.at('/refused')).toEqual([]);
    expect(payer.subscriptions().filter((found) => found.endpoint === receiver.url('/refused'))).toEqual([]);
  });

  it('refuses a filter naming another client, and hides a subscription from every client but its creator', async () => {
    const tokenB = await accessToken(clientB);
    const foreign = await call(
      'POST',
      '/Subscription',
      tokenB,
      pasSubscription({ endpoint: receiver.url('/foreign'), orgIdentifier: clientA }),
    );
    expect(foreign.status).toBe(403);
    expect(receiver.at('/foreign')).toEqual([]);

    const { id, token } = await subscribed(clientA, '/owned');
    const renewal = pasSubscription({ endpoint: receiver.url('/owned'), orgIdentifier: clientB, id });
    expect((await call('GET', `/Subscription/${id}`, tokenB)).status).toBe(404);
    expect((await call('GET', `/Subscription/${id}/$status`, tokenB)).status).toBe(404);
    expect((await call('PUT', `/Subscription/${id}`, tokenB, renewal)).status).toBe(404);
    expect((await call('DELETE', `/Subscription/${id}`, tokenB)).status).toBe(404);
    expect((await call('GET', `/Subscription/${id}`, token)).status).toBe(200);

    const deleted = await call('DELETE', `/Subscription/${id}`, token);
    expect(deleted.status).toBe(204);
    expect((await call('GET', `/Subscription/${id}`, token)).status).toBe(404);
    expect((await call('PATCH', `/Subscription/${id}`, token, {})).status).toBe(405);
  });
});

describe('local PAS payer: notifications', () => {
  it('sends a heartbeat every heartbeat period', async () => {
    const { id } = await subscribed(clientA, '/heartbeat', { heartbeatSeconds: 1 });
    const heartbeats = await receiver.waitFor('/heartbeat', 2, 'heartbeat');
    expect(statusOf(heartbeats[0]!.body)).toMatchObject({
      subscription: `Subscription/${id}`,
      status: 'active',
      type: 'heartbeat',
      eventsSinceStart: '0',
      events: [],
    });
    expect(heartbeats[0]!.headers.authorization).toBe('Bearer a-channel-secret');
  });

  it('notifies the operator’s decision of a pended claim with the full PAS Response Bundle, to its client only', async () => {
    const { id } = await subscribed(clientA, '/events-a');
    await subscribed(clientB, '/events-b');
    const { request, claimResponse } = await pendedThenDecided(clientA);

    const [event] = await receiver.waitFor('/events-a', 1, 'event-notification');
    const status = statusOf(event!.body);
    expect(status).toMatchObject({ subscription: `Subscription/${id}`, status: 'active', eventsSinceStart: '1' });
    expect(status.events).toEqual([{ number: '1', focus: event!.body.entry![1]!.fullUrl }]);
    const response = event!.body.entry![1]!.resource as Bundle;
    expect(response.identifier).toEqual(request.identifier);
    const answered = response.entry![0]!.resource as ClaimResponse;
    expect(answered).toMatchObject({ resourceType: 'ClaimResponse', id: claimResponse.id });
    expect(answered.identifier).toEqual((request.entry![0]!.resource as { identifier: unknown }).identifier);
    expect(readPasAnswer(response)).toMatchObject({ kind: 'decision', decision: { status: 'approved' } });
    expect(await r4Errors(event!.body, 1 << 20)).toEqual([]);

    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.at('/events-b').map((found) => statusOf(found.body).type)).toEqual(['handshake']);
  });

  it('answers $status (GET or POST) as the backport has it: a searchset of one query-status', async () => {
    const { id, token } = await subscribed(clientA, '/status');
    await pendedThenDecided(clientA, 'denied');
    await receiver.waitFor('/status', 1, 'event-notification');
    for (const method of ['GET', 'POST']) {
      const answer = await call(method, `/Subscription/${id}/$status`, token);
      expect(answer.status).toBe(200);
      const bundle = answer.body as Bundle;
      expect(bundle).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 1 });
      const parameters = bundle.entry![0]!.resource as Parameters;
      expect(statusOf({ resourceType: 'Bundle', type: 'history', entry: [{ resource: parameters }] })).toMatchObject({
        subscription: `Subscription/${id}`,
        status: 'active',
        type: 'query-status',
        eventsSinceStart: '1',
      });
      expect(await r4Errors(bundle, 1 << 20)).toEqual([]);
    }
  });

  it('renews with PUT (a new end), keeping the channel’s header when the renewal does not send it again', async () => {
    const { id, token } = await subscribed(clientA, '/renewed', { secret: 'renewed-secret' });
    const end = new Date(Date.now() + 14 * 86_400_000).toISOString();
    const renewal = pasSubscription({ endpoint: receiver.url('/renewed'), orgIdentifier: clientA, id, end });
    const { header: _header, ...channel } = renewal.channel;
    const renewed = await call('PUT', `/Subscription/${id}`, token, { ...renewal, status: 'active', channel });
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ id, status: 'active', end });
    expect((await call('GET', `/Subscription/${id}`, token)).body).toMatchObject({ end });
    const otherId = await call('PUT', `/Subscription/${id}`, token, { ...renewal, id: 'another-id' });
    expect(otherId.status).toBe(400);

    await pendedThenDecided(clientA);
    const [event] = await receiver.waitFor('/renewed', 1, 'event-notification');
    expect(event!.headers.authorization).toBe('Bearer renewed-secret');
  });

  it('puts a subscription whose delivery fails in error, and notifies it no more', async () => {
    receiver.answer('/refuses-handshake', 500);
    const token = await accessToken(clientA);
    const endpoint = receiver.url('/refuses-handshake');
    const created = await call('POST', '/Subscription', token, pasSubscription({ endpoint, orgIdentifier: clientA }));
    const refusedId = (created.body as { id: string }).id;
    await expect.poll(() => payer.subscriptions().find((found) => found.id === refusedId)?.status).toBe('error');

    const { id } = await subscribed(clientA, '/fails-later');
    receiver.answer('/fails-later', 503);
    await pendedThenDecided(clientA);
    await expect.poll(() => payer.subscriptions().find((found) => found.id === id)?.status).toBe('error');
    const status = await call('GET', `/Subscription/${id}/$status`, token);
    expect(statusOf({ resourceType: 'Bundle', type: 'history', entry: (status.body as Bundle).entry })).toMatchObject({
      status: 'error',
    });
    await pendedThenDecided(clientA);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.at('/fails-later').map((found) => statusOf(found.body).type)).toEqual([
      'handshake',
      'event-notification',
    ]);
    expect(receiver.at('/refuses-handshake')).toHaveLength(1);
  });

  it('turns a subscription off past its end (or when the payer turns it off): no notification then', async () => {
    const end = new Date(Date.now() + 3000).toISOString();
    const { id: ending } = await subscribed(clientA, '/ending', { end, heartbeatSeconds: 1 });
    const { id: turnedOff } = await subscribed(clientA, '/turned-off');
    payer.setSubscriptionStatus(turnedOff, 'off');
    await new Promise((resolve) => setTimeout(resolve, Date.parse(end) - Date.now() + 100));
    expect(payer.subscriptions().find((found) => found.id === ending)?.status).toBe('off');
    const heartbeatsAtEnd = receiver.at('/ending').length;

    await pendedThenDecided(clientA);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(receiver.at('/ending')).toHaveLength(heartbeatsAtEnd);
    expect(receiver.at('/ending').map((found) => statusOf(found.body).type)).not.toContain('event-notification');
    expect(receiver.at('/turned-off').map((found) => statusOf(found.body).type)).toEqual(['handshake']);
  });
});
