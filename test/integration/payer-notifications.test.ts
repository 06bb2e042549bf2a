import { createHash, randomBytes } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import type { StoredPayerSubscription } from '#lib/entities/payer-subscription';
import { requestEntity } from '#lib/entities/request';
import { OUR_SYSTEMS } from '#lib/payer-api/pas/codes';
import { dynamoPayerSubscriptionStore } from '#lib/payer-subscriptions/dynamo-payer-subscription-store';
import { dynamoSubmittedClaimStore } from '#lib/payer-subscriptions/dynamo-submitted-claim-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { call } from '#test/support/api';
import { hostileNotifications } from '#test/support/hostile/table';
import {
  claimsOf,
  createConnection,
  createPasRequest,
  decideAtPayer,
  historyOf,
  type PayerApiTenant,
  payerApiTenant,
  setPayerEndpoint,
  stackPayer,
  submit,
} from '#test/support/payer-api';
import { getRequest, locationOf, pollUntil, settledRun } from './rpa-end-to-end-support.ts';
import { rpaOf } from './rpa-support.ts';

/*
 * Payers' notifications on our PAS subscriptions (docs/payer-api.md, "Notifications"), POSTed over HTTP to the
 * local gateway's public route as a payer sends them (R4 Subscriptions Backport, rest-hook, the channel header
 * it was given). Subscriptions are made here directly through the store, with a secret of the test's, as the
 * keeper makes them; the claims are real submissions to the stack's local PAS payer, whose operator decides
 * them, and the event's `$inquire` reads the decision over HTTP with real client assertions.
 */
const payer = stackPayer();
/** This file's payer in the directory: the shared stack's payer, under an id no other file uses. */
const PAYER_ID = 'PTEST-NOTIFY';
/** The same payer under another id: a second connection of the same organization. */
const SECOND_PAYER_ID = 'PTEST-NOTIFY-2';
const TOPIC = 'http://hl7.org/fhir/us/davinci-pas/SubscriptionTopic/PASSubscriptionTopic';
const notificationPath = (subscriptionId: string) => `/api/external/v1.1/Payers/notifications/${subscriptionId}`;

beforeAll(async () => {
  await setPayerEndpoint(PAYER_ID, payer);
  await setPayerEndpoint(SECOND_PAYER_ID, payer);
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A subscription of the tenant's connection, as the keeper writes it; its item and the secret the payer holds. */
async function subscriptionOf(tenant: PayerApiTenant) {
  const secret = randomBytes(32).toString('base64url');
  const at = new Date().toISOString();
  const subscription: StoredPayerSubscription = {
    subscriptionId: randomBytes(16).toString('base64url'),
    clientId: tenant.clientId,
    organizationId: tenant.organizationId,
    payerConnectionId: tenant.connection.externalId,
    payerId: tenant.payerId,
    payerSubscriptionId: `payer-${randomBytes(6).toString('hex')}`,
    secretHash: sha256(secret),
    status: 'requested',
    endAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    heartbeatPeriodSeconds: 300,
    lastEventNumber: 0,
    lastNotifiedAt: null,
    shard: '0',
    checkDueAt: new Date(Date.now() + 86_400_000).toISOString(),
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  expect(await dynamoPayerSubscriptionStore.create(subscription)).toBe(true);
  return { subscription, secret };
}

/** The SubscriptionStatus Parameters of a notification; for an event, its `notification-event`. */
const statusOf = (payerSubscriptionId: string, type: string, eventNumber: number, focus?: string) => ({
  resourceType: 'Parameters',
  parameter: [
    { name: 'subscription', valueReference: { reference: `Subscription/${payerSubscriptionId}` } },
    { name: 'topic', valueCanonical: TOPIC },
    { name: 'status', valueCode: 'active' },
    { name: 'type', valueCode: type },
    { name: 'events-since-subscription-start', valueString: String(eventNumber) },
    ...(focus
      ? [
          {
            name: 'notification-event',
            part: [
              { name: 'event-number', valueString: String(eventNumber) },
              { name: 'timestamp', valueInstant: new Date().toISOString() },
              { name: 'focus', valueReference: { reference: focus } },
            ],
          },
        ]
      : []),
  ],
});

/** A handshake or heartbeat Bundle. */
const ping = (payerSubscriptionId: string, type: 'handshake' | 'heartbeat') => ({
  resourceType: 'Bundle',
  type: 'history',
  timestamp: new Date().toISOString(),
  entry: [
    { fullUrl: 'urn:uuid:5d0a3d0e-1111-4c1b-9f5e-0a1b2c3d4e5f', resource: statusOf(payerSubscriptionId, type, 0) },
  ],
});

/** An event notification with full-resource content: the claim's PAS Response Bundle after the status. */
const eventOf = (payerSubscriptionId: string, eventNumber: number, claimIdentifier: string) => {
  const responseUrl = `urn:uuid:${randomBytes(16)
    .toString('hex')
    .replace(/(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-')}`;
  return {
    resourceType: 'Bundle',
    type: 'history',
    timestamp: new Date().toISOString(),
    entry: [
      {
        fullUrl: 'urn:uuid:5d0a3d0e-2222-4c1b-9f5e-0a1b2c3d4e5f',
        resource: statusOf(payerSubscriptionId, 'event-notification', eventNumber, responseUrl),
      },
      {
        fullUrl: responseUrl,
        resource: {
          resourceType: 'Bundle',
          type: 'collection',
          entry: [
            {
              fullUrl: 'urn:uuid:5d0a3d0e-3333-4c1b-9f5e-0a1b2c3d4e5f',
              resource: {
                resourceType: 'ClaimResponse',
                identifier: [{ system: OUR_SYSTEMS.claim, value: claimIdentifier }],
                status: 'active',
                use: 'preauthorization',
                outcome: 'complete',
              },
            },
          ],
        },
      },
    ],
  };
};

const post = (
  subscriptionId: string,
  secret: string | undefined,
  body: unknown,
  contentType = 'application/fhir+json',
) =>
  call('POST', notificationPath(subscriptionId), {
    rawBody: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': contentType, ...(secret === undefined ? {} : { authorization: `Bearer ${secret}` }) },
  });

/** A pended claim of the tenant at the payer: the request, and the claim identifier we sent. */
async function pendedClaim(tenant: PayerApiTenant) {
  const externalId = await createPasRequest(tenant, 'SBX-10003');
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  expect(run.outcome).toBe('submitted');
  const record = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
  return { externalId, claimIdentifier: record!.submission!.bundleIdentifier };
}

/** Every item of the request's partition (its runs, history, re-check): what a refused notification leaves as it was. */
const partitionOf = async (clientId: string, externalId: string) => {
  const { pk } = requestEntity.key({ clientId, externalId });
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    }),
  );
  return Items ?? [];
};

describe('payers’ notifications on our PAS subscriptions', () => {
  let tenant: PayerApiTenant;
  let subscription: StoredPayerSubscription;
  let secret: string;
  let claim: Awaited<ReturnType<typeof pendedClaim>>;
  let other: { tenant: PayerApiTenant; claim: Awaited<ReturnType<typeof pendedClaim>> };

  beforeAll(async () => {
    tenant = await payerApiTenant('pas-notify', { payer, payerId: PAYER_ID });
    ({ subscription, secret } = await subscriptionOf(tenant));
    claim = await pendedClaim(tenant);
    const otherTenant = await payerApiTenant('pas-notify-other', { payer, payerId: PAYER_ID });
    other = { tenant: otherTenant, claim: await pendedClaim(otherTenant) };
  });

  it('record a submitted claim’s pointer to its request, within its client and connection', async () => {
    expect(await dynamoSubmittedClaimStore.get(tenant.clientId, claim.claimIdentifier)).toMatchObject({
      externalId: claim.externalId,
      organizationId: tenant.organizationId,
      clientUserId: tenant.clientUserId,
      payerConnectionId: tenant.connection.externalId,
    });
    expect(await dynamoSubmittedClaimStore.get(other.tenant.clientId, claim.claimIdentifier)).toBeUndefined();
  });

  it('refuse an unknown subscription (404) and a missing or wrong secret (401), storing nothing', async () => {
    const handshake = ping(subscription.payerSubscriptionId!, 'handshake');
    expect((await post(randomBytes(16).toString('base64url'), secret, handshake)).status).toBe(404);
    expect((await post(subscription.subscriptionId, undefined, handshake)).status).toBe(401);
    const wrong = await post(subscription.subscriptionId, randomBytes(32).toString('base64url'), handshake);
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(secret);
    expect(await dynamoPayerSubscriptionStore.get(subscription.subscriptionId)).toEqual(subscription);
  });

  it('take a handshake and a heartbeat (200): the subscription is active, when the payer last reached us recorded', async () => {
    const handshake = await post(
      subscription.subscriptionId,
      secret,
      ping(subscription.payerSubscriptionId!, 'handshake'),
    );
    expect(handshake.status, handshake.text).toBe(200);
    expect(handshake.body).toEqual({ received: 'handshake' });
    const shaken = await dynamoPayerSubscriptionStore.get(subscription.subscriptionId);
    expect(shaken).toMatchObject({ status: 'active', lastEventNumber: 0, version: 2 });
    expect(shaken!.lastNotifiedAt).toMatch(/^\d{4}-/);
    // Plain JSON too: a payer may send its Bundle as application/json.
    const beat = await post(
      subscription.subscriptionId,
      secret,
      ping(subscription.payerSubscriptionId!, 'heartbeat'),
      'application/json',
    );
    expect(beat.status, beat.text).toBe(200);
    expect(await dynamoPayerSubscriptionStore.get(subscription.subscriptionId)).toMatchObject({
      status: 'active',
      version: 3,
    });
    // Up to 1 MiB, above the API's 256 KiB for JSON bodies: full-resource content carries whole PAS Response Bundles.
    const large = { ...ping(subscription.payerSubscriptionId!, 'heartbeat'), id: 'x'.repeat(600 * 1024) };
    expect((await post(subscription.subscriptionId, secret, large)).status).toBe(200);
  });

  it('start a $inquire of an event’s claim through the subscription’s connection (202): the read changes the status', async () => {
    const [pended] = await claimsOf(payer, claim.claimIdentifier);
    const number = `PNOTE-${Date.now()}`;
    await decideAtPayer(payer, { claimId: pended!.claimId, status: 'approved', number });
    expect((await getRequest(tenant, claim.externalId)).authorization.status).toBe('pending');

    const res = await post(
      subscription.subscriptionId,
      secret,
      eventOf(subscription.payerSubscriptionId!, 1, claim.claimIdentifier),
    );
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ received: 'event-notification' });
    expect(await dynamoPayerSubscriptionStore.get(subscription.subscriptionId)).toMatchObject({ lastEventNumber: 1 });

    const approved = await pollUntil(
      () => getRequest(tenant, claim.externalId),
      (request) => request.authorization.status === 'approved',
      { timeoutMs: 90_000 },
    );
    expect(approved.authorization).toMatchObject({ status: 'approved', number, channel: 'pas' });
    const [latest] = await historyOf(tenant, claim.externalId);
    expect(latest!.changedBy.kind).toBe('run');
    // Settled, so that nothing of this read is still being written when the refusals below compare the partition.
    await settledRun(tenant, `${rpaOf(claim.externalId)}/runs/${latest!.changedBy.runId}`);
    const run = await dynamoRunStore.getRun({
      clientId: tenant.clientId,
      externalId: claim.externalId,
      runId: latest!.changedBy.runId,
    });
    expect(run).toMatchObject({
      kind: 'check-auth-status',
      channel: 'pas',
      payerConnectionId: tenant.connection.externalId,
      clientUserId: tenant.clientUserId,
    });
  });

  describe('hostile notifications: each a 4xx, nothing stored', () => {
    const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const cases: Record<(typeof hostileNotifications)[number]['name'], () => { body: unknown }> = {
      oversize: () => {
        const prefix = '{"resourceType":"Bundle","pad":"';
        return { body: `${prefix}${'x'.repeat(1024 * 1024 + 1 - prefix.length - 2)}"}` };
      },
      'deep JSON': () => ({
        body: `{"resourceType":"Bundle","type":"history","entry":${deep(40)}}`,
      }),
      'replayed notification': () => ({ body: eventOf(subscription.payerSubscriptionId!, 1, claim.claimIdentifier) }),
      "another connection's subscription id": () => ({
        body: eventOf(`payer-${randomBytes(6).toString('hex')}`, 9, claim.claimIdentifier),
      }),
      "another tenant's claim": () => ({
        body: eventOf(subscription.payerSubscriptionId!, 9, other.claim.claimIdentifier),
      }),
    };
    it.each(hostileNotifications.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
      const before = {
        subscription: await dynamoPayerSubscriptionStore.get(subscription.subscriptionId),
        ours: await partitionOf(tenant.clientId, claim.externalId),
        theirs: await partitionOf(other.tenant.clientId, other.claim.externalId),
      };
      const res = await post(subscription.subscriptionId, secret, cases[row.name]().body);
      expect(res.status, res.text).toBe(row.status);
      expect(res.text).not.toContain(secret);
      expect({
        subscription: await dynamoPayerSubscriptionStore.get(subscription.subscriptionId),
        ours: await partitionOf(tenant.clientId, claim.externalId),
        theirs: await partitionOf(other.tenant.clientId, other.claim.externalId),
      }).toEqual(before);
    });
  });

  it('refuse an event on another connection’s subscription naming this connection’s claim (422), storing nothing', async () => {
    const second = await createConnection(tenant, SECOND_PAYER_ID, tenant.payerClientId);
    const { subscription: theirs, secret: theirSecret } = await subscriptionOf({
      ...tenant,
      payerId: SECOND_PAYER_ID,
      connection: second,
    });
    const before = await partitionOf(tenant.clientId, claim.externalId);
    const res = await post(
      theirs.subscriptionId,
      theirSecret,
      eventOf(theirs.payerSubscriptionId!, 1, claim.claimIdentifier),
    );
    expect(res.status, res.text).toBe(422);
    expect(res.body.reason).toBe('unknown_claims');
    expect(await dynamoPayerSubscriptionStore.get(theirs.subscriptionId)).toEqual(theirs);
    expect(await partitionOf(tenant.clientId, claim.externalId)).toEqual(before);
  });

  it('refuse what is not a notification: another media type (415), not a history Bundle (400)', async () => {
    const heartbeat = ping(subscription.payerSubscriptionId!, 'heartbeat');
    expect((await post(subscription.subscriptionId, secret, heartbeat, 'text/plain')).status).toBe(415);
    const notBundle = await post(subscription.subscriptionId, secret, { resourceType: 'Patient' });
    expect(notBundle.status).toBe(400);
    expect(notBundle.body.reason).toBe('not_a_notification');
  });
});
