import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceEvent } from '#lib/entities/service-event';
import { uuidv7 } from '#lib/ids';
import { webhookDelivery } from '#lib/webhooks/delivery';
import { DISABLE_AFTER_FAILING_MS, RETRY_DELAYS_SECONDS } from '#lib/webhooks/delivery-records';
import { dynamoWebhookStore } from '#lib/webhooks/dynamo-webhook-store';
import { signingSecretOpener } from '#lib/webhooks/open-signing-secret';
import type { Resolve, UrlPolicy } from '#lib/webhooks/target-address';
import { webhookTransport } from '#lib/webhooks/transport';
import { call, newTenant } from '#test/support/api';
import { recordDynamoCalls } from '#test/support/dynamo-recorder';
import { type Answer, matchingSignatures, type Receiver, startReceiver } from './webhook-receiver-support.ts';

/**
 * Delivery you can trust (docs/webhooks.md): real HTTP receivers on loopback get what the local
 * stack's delivery timer sends, and check its signature with their own HMAC (not the package that
 * signed it); retries keep the webhook-id; redirects are not followed; SSRF guards hold at delivery.
 * The in-process cases run the same delivery code in this process with a clock two hours ahead, so
 * the stack's timer (which sees their deliveries as not yet due) never races them.
 */
const webhooksPath = '/api/external/v1.1/Webhooks';
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let t: Tenant;
const receivers: Receiver[] = [];

const receiver = async (answer?: Answer) => {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
};

const subscribe = async (url: string, events: string[] = ['authorization.status_changed'], apiKey = t.apiKey) => {
  const res = await call('POST', webhooksPath, { apiKey, body: { url, events } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; secret: string; url: string };
};

const deliveriesOf = async (webhookId: string, query = '', apiKey = t.apiKey) => {
  const res = await call('GET', `${webhooksPath}/${webhookId}/deliveries${query}`, { apiKey });
  expect(res.status, res.text).toBe(200);
  return res.body as { items: any[]; nextCursor: string | null; pageSize: number };
};

/** Polls the deliveries list until `check` holds for the first one (the stack records after it sends). */
const eventually = async (
  webhookId: string,
  check: (delivery: any) => boolean,
  timeoutMs = 15_000,
  apiKey = t.apiKey,
) => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const [first] = (await deliveriesOf(webhookId, '', apiKey)).items;
    if (first && check(first)) return first;
    if (Date.now() > until) throw new Error(`the delivery never got there: ${JSON.stringify(first)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

beforeAll(async () => {
  t = await newTenant('webhook-delivery');
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

describe('a test event, through the API and the local delivery timer', () => {
  it('arrives signed: the signature verifies with an independent HMAC, the body is the event', async () => {
    const inbox = await receiver();
    const webhook = await subscribe(inbox.url);
    const started = await call('POST', `${webhooksPath}/${webhook.id}/test`, { apiKey: t.apiKey });
    expect(started.status, started.text).toBe(202);
    expect(started.body).toMatchObject({ eventType: 'webhook.test', status: 'pending', attempts: 0, trigger: 'test' });

    const [delivery] = await inbox.waitFor(1);
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['webhook-id']).toBe(started.body.eventId);
    expect(delivery!.headers['webhook-id']).toMatch(/^evt_[0-9a-f-]{36}$/);
    expect(Math.abs(Number(delivery!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(delivery!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(matchingSignatures(webhook.secret, delivery!)).toHaveLength(1);
    // A wrong secret, or a body changed by one character, does not verify.
    expect(matchingSignatures(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, delivery!)).toEqual([]);
    expect(matchingSignatures(webhook.secret, { ...delivery!, body: `${delivery!.body} ` })).toEqual([]);
    expect(JSON.parse(delivery!.body)).toEqual({
      id: started.body.eventId,
      type: 'webhook.test',
      occurredAt: expect.stringMatching(/^\d{4}-/),
      data: { webhookId: webhook.id },
    });
    expect(delivery!.body).not.toContain(t.clientId);

    const recorded = await eventually(webhook.id, (d) => d.status === 'delivered');
    expect(recorded).toMatchObject({
      id: started.body.id,
      eventId: started.body.eventId,
      eventType: 'webhook.test',
      status: 'delivered',
      attempts: 1,
      lastResponseStatus: 204,
      lastError: null,
      nextAttemptAt: null,
      recentAttempts: [{ responseStatus: 204, error: null, durationMs: expect.any(Number) }],
    });
  });

  it('is retried after a 500, with the same webhook-id, and then delivered', async () => {
    const inbox = await receiver((n) => ({ status: n === 0 ? 500 : 200 }));
    const webhook = await subscribe(inbox.url);
    const started = await call('POST', `${webhooksPath}/${webhook.id}/test`, { apiKey: t.apiKey });
    expect(started.status).toBe(202);
    const failedFirst = await eventually(webhook.id, (d) => d.attempts === 1);
    expect(failedFirst).toMatchObject({ status: 'pending', lastResponseStatus: 500, lastError: 'http_status' });
    const pause = Date.parse(failedFirst.nextAttemptAt) - Date.parse(failedFirst.lastAttemptAt);
    // The first retry: 5 s, jittered by ±20 %.
    expect(pause).toBeGreaterThanOrEqual(RETRY_DELAYS_SECONDS[0] * 800 - 1);
    expect(pause).toBeLessThanOrEqual(RETRY_DELAYS_SECONDS[0] * 1200 + 1);

    const [first, second] = await inbox.waitFor(2, 20_000);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    for (const attempt of [first!, second!]) expect(matchingSignatures(webhook.secret, attempt)).toHaveLength(1);
    const recorded = await eventually(webhook.id, (d) => d.status === 'delivered');
    expect(recorded.attempts).toBe(2);
    expect(recorded.recentAttempts.map((a: any) => a.responseStatus)).toEqual([500, 200]);
  }, 40_000);

  it('does not follow a redirect: a 3xx is a failed attempt, and the Location is never requested', async () => {
    const inbox = await receiver((_n, request) =>
      request.path === '/hook'
        ? { status: 302, headers: { location: `http://127.0.0.1:${inbox.port}/elsewhere` } }
        : { status: 200 },
    );
    const webhook = await subscribe(inbox.url);
    await call('POST', `${webhooksPath}/${webhook.id}/test`, { apiKey: t.apiKey });
    const recorded = await eventually(webhook.id, (d) => d.attempts === 1);
    expect(recorded).toMatchObject({ status: 'pending', lastResponseStatus: 302, lastError: 'redirect' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(inbox.received.map((r) => r.path)).toEqual(['/hook']);
    // Deleted: its retry ends without a request.
    expect((await call('DELETE', `${webhooksPath}/${webhook.id}`, { apiKey: t.apiKey })).status).toBe(204);
  });

  it('after a rotation carries two signatures, by the new and the previous secret', async () => {
    const inbox = await receiver();
    const webhook = await subscribe(inbox.url);
    const rotated = await call('POST', `${webhooksPath}/${webhook.id}/rotate-secret`, { apiKey: t.apiKey });
    expect(rotated.status).toBe(200);
    await call('POST', `${webhooksPath}/${webhook.id}/test`, { apiKey: t.apiKey });
    const [delivery] = await inbox.waitFor(1);
    const signatures = String(delivery!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    const byNew = matchingSignatures(rotated.body.secret, delivery!);
    const byOld = matchingSignatures(webhook.secret, delivery!);
    expect(byNew).toHaveLength(1);
    expect(byOld).toHaveLength(1);
    expect(byNew[0]).not.toBe(byOld[0]);
  });

  it('redelivers a delivered delivery with the same webhook-id; a pending one is a 409', async () => {
    const inbox = await receiver((n) => (n === 1 ? 'hang' : { status: 200 }));
    const webhook = await subscribe(inbox.url);
    const started = await call('POST', `${webhooksPath}/${webhook.id}/test`, { apiKey: t.apiKey });
    await eventually(webhook.id, (d) => d.status === 'delivered');
    const url = `${webhooksPath}/${webhook.id}/deliveries/${started.body.id}/redeliver`;
    const again = await call('POST', url, { apiKey: t.apiKey });
    expect(again.status, again.text).toBe(202);
    expect(again.body).toMatchObject({ id: started.body.id, status: 'pending', trigger: 'redelivery', attempts: 1 });
    const conflict = await call('POST', url, { apiKey: t.apiKey });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ reason: 'delivery_pending' });
    const [first, second] = await inbox.waitFor(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    const unknown = await call('POST', `${webhooksPath}/${webhook.id}/deliveries/${crypto.randomUUID()}/redeliver`, {
      apiKey: t.apiKey,
    });
    expect(unknown.status).toBe(404);
  }, 40_000);

  it('lists deliveries newest first, in pages', async () => {
    const inbox = await receiver();
    const webhook = await subscribe(inbox.url);
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await call('POST', `${webhooksPath}/${webhook.id}/test`, { apiKey: t.apiKey })).body.id);
    }
    const first = await deliveriesOf(webhook.id, '?pageSize=2');
    expect(first.items.map((d) => d.id)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toBe(ids[1]);
    const second = await deliveriesOf(webhook.id, `?pageSize=2&cursor=${first.nextCursor}`);
    expect(second.items.map((d) => d.id)).toEqual([ids[0]]);
    expect(second.nextCursor).toBeNull();
    const bad = await call('GET', `${webhooksPath}/${webhook.id}/deliveries?pageSize=101`, { apiKey: t.apiKey });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^\/pageSize: Maximum error/);
    const badCursor = await call('GET', `${webhooksPath}/${webhook.id}/deliveries?cursor=x`, { apiKey: t.apiKey });
    expect(badCursor.status).toBe(400);
  });
});

/** The delivery code in this process, with its own resolver and clock (see the file's comment). */
const clock = { offset: 2 * 60 * 60 * 1000 };
const inProcess = (options: { resolve?: Resolve; policy?: UrlPolicy; timeoutMs?: number } = {}) =>
  webhookDelivery({
    store: dynamoWebhookStore,
    openSecret: signingSecretOpener(),
    transport: webhookTransport({ policy: options.policy ?? 'local', ...options }),
    now: () => new Date(Date.now() + clock.offset),
  });

const statusChanged = (clientId: string, organizationId?: string): ServiceEvent<'authorization.status_changed'> => ({
  id: `evt_${uuidv7()}`,
  type: 'authorization.status_changed',
  clientId,
  ...(organizationId ? { organizationId } : {}),
  occurredAt: new Date().toISOString(),
  data: {
    requestExternalId: 'REQ-1',
    previous: { status: 'pending', number: null, decisionDate: null },
    current: { status: 'approved', number: 'AUTH-1', decisionDate: '2026-05-01' },
    runId: null,
    items: [],
    reasonCodes: [],
  },
});

const resolvingTo =
  (table: Record<string, string[]>): Resolve =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw new Error('ENOTFOUND');
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('no SSRF: every address is checked at each delivery, and the one checked is the one used', () => {
  it.each([
    ['the metadata address', ['169.254.169.254']],
    ['a link-local address', ['169.254.3.4']],
    ['the IPv6 metadata address', ['fd00:ec2::254']],
    ['an IPv4-mapped metadata address', ['::ffff:169.254.169.254']],
    ['a public and a link-local address', ['93.184.216.34', 'fe80::1']],
    ['a private address', ['10.1.2.3']],
  ])('refuses a name that resolves to %s', async (_, addresses) => {
    // Accepted when subscribed (a name), pointed elsewhere since: what DNS rebinding does.
    const u = await newTenant('webhook-ssrf');
    await subscribe('http://rebinding.test/hook', undefined, u.apiKey);
    const delivery = inProcess({ resolve: resolvingTo({ 'rebinding.test': addresses }) });
    const refs = await delivery.deliverEvent(statusChanged(u.clientId));
    expect(refs).toHaveLength(1);
    const recorded = await dynamoWebhookStore.getDelivery(refs[0]!);
    expect(recorded).toMatchObject({ status: 'pending', attempts: 1 });
    expect(recorded!.recentAttempts[0]).toMatchObject({ error: 'address_refused', responseStatus: null });
  });

  it('connects to the address it checked: a name the system cannot resolve reaches the receiver', async () => {
    const inbox = await receiver();
    const u = await newTenant('webhook-pinned');
    const webhook = await subscribe(`http://pinned.test:${inbox.port}/hook`, undefined, u.apiKey);
    const delivery = inProcess({ resolve: resolvingTo({ 'pinned.test': ['127.0.0.1'] }) });
    const [ref] = await delivery.deliverEvent(statusChanged(u.clientId));
    const [received] = await inbox.waitFor(1);
    expect(received!.headers.host).toBe(`pinned.test:${inbox.port}`);
    expect(matchingSignatures(webhook.secret, received!)).toHaveLength(1);
    expect(await dynamoWebhookStore.getDelivery(ref!)).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('under the AWS policy refuses http and loopback at delivery, whatever was stored', async () => {
    const inbox = await receiver();
    const u = await newTenant('webhook-aws-policy');
    await subscribe(inbox.url, undefined, u.apiKey);
    const [ref] = await inProcess({ policy: 'public-https' }).deliverEvent(statusChanged(u.clientId));
    expect((await dynamoWebhookStore.getDelivery(ref!))!.recentAttempts[0]!.error).toBe('address_refused');
    expect(inbox.received).toEqual([]);
  });

  it('gives up on a receiver that does not answer in time (timeout)', async () => {
    const inbox = await receiver(() => 'hang');
    const u = await newTenant('webhook-timeout');
    await subscribe(inbox.url, undefined, u.apiKey);
    const [ref] = await inProcess({ timeoutMs: 300 }).deliverEvent(statusChanged(u.clientId));
    const attempt = (await dynamoWebhookStore.getDelivery(ref!))!.recentAttempts[0]!;
    expect(attempt).toMatchObject({ error: 'timeout', responseStatus: null });
    expect(attempt.durationMs).toBeGreaterThanOrEqual(290);
    expect(attempt.durationMs).toBeLessThan(3000);
  });
});

describe('fan-out: deliverEvent, the seam the event relay calls', () => {
  it('delivers to the subscriptions that list the type, within reach of the event’s organization, once', async () => {
    const tenant = await newTenant('webhook-fanout');
    const { organizationId: orgB } = await tenant.admin.createOrganization(tenant.clientId, 'Org B');
    const { apiKey: keyB } = await tenant.admin.createApiKey(tenant.clientId, undefined, { organizationId: orgB });
    const inbox = await receiver();
    const all = await subscribe(`${inbox.url}?all`, ['authorization.status_changed'], tenant.apiKey);
    await subscribe(`${inbox.url}?other-type`, ['automation.run_finished'], tenant.apiKey);
    const ofB = await subscribe(`${inbox.url}?org-b`, ['authorization.status_changed'], keyB);
    const delivery = inProcess();

    // Another organization's event reaches the client's subscription, not B's.
    const ofA = statusChanged(tenant.clientId, tenant.organizationId);
    expect((await delivery.deliverEvent(ofA)).map((ref) => ref.webhookId)).toEqual([all.id]);
    // An event of no organization (a request's) reaches both; handed over twice, it is recorded and sent once.
    const clientWide = statusChanged(tenant.clientId);
    expect((await delivery.deliverEvent(clientWide)).map((ref) => ref.webhookId).sort()).toEqual(
      [all.id, ofB.id].sort(),
    );
    expect(await delivery.deliverEvent(clientWide)).toEqual([]);
    // Another client's event reaches none of them.
    const stranger = await newTenant('webhook-fanout-other');
    expect(await delivery.deliverEvent(statusChanged(stranger.clientId))).toEqual([]);
    await inbox.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(inbox.received.map((r) => r.path).sort()).toEqual(['/hook?all', '/hook?all', '/hook?org-b']);
    expect(inbox.received.map((r) => r.headers['webhook-id']).sort()).toEqual(
      [ofA.id, clientWide.id, clientWide.id].sort(),
    );
  });
});

describe('a status change read by a run', () => {
  it('reaches every subscription, with the run id only where the subscription may reach the run’s organization', async () => {
    const tenant = await newTenant('webhook-run-org');
    const { organizationId: orgB } = await tenant.admin.createOrganization(tenant.clientId, 'Org B');
    const { apiKey: keyA } = await tenant.admin.createApiKey(tenant.clientId, undefined, {
      organizationId: tenant.organizationId,
    });
    const { apiKey: keyB } = await tenant.admin.createApiKey(tenant.clientId, undefined, { organizationId: orgB });
    const inbox = await receiver();
    await subscribe(`${inbox.url}?all`, ['authorization.status_changed'], tenant.apiKey);
    await subscribe(`${inbox.url}?org-a`, ['authorization.status_changed'], keyA);
    await subscribe(`${inbox.url}?org-b`, ['authorization.status_changed'], keyB);
    const runId = uuidv7();
    const readByRunOfA = {
      ...statusChanged(tenant.clientId),
      runOrganizationId: tenant.organizationId,
      data: { ...statusChanged(tenant.clientId).data, runId },
    };
    expect(await inProcess().deliverEvent(readByRunOfA)).toHaveLength(3);
    const received = await inbox.waitFor(3);
    const runIds = Object.fromEntries(
      received.map((r) => [r.path, (JSON.parse(r.body) as { data: { runId: string | null } }).data.runId]),
    );
    expect(runIds).toEqual({ '/hook?all': runId, '/hook?org-a': runId, '/hook?org-b': null });
    expect(received.every((r) => !r.body.includes('rganizationId'))).toBe(true);
  });
});

describe('what an event costs', () => {
  it('one Query of the subscriptions, then three writes per delivery: record, hold, result', async () => {
    const inbox = await receiver();
    const u = await newTenant('webhook-round-trips');
    await subscribe(inbox.url, undefined, u.apiKey);
    await subscribe(`${inbox.url}?second`, undefined, u.apiKey);
    const recorder = recordDynamoCalls();
    try {
      expect(await inProcess().deliverEvent(statusChanged(u.clientId))).toHaveLength(2);
      expect(recorder.calls.map((c) => c.command).sort()).toEqual([
        'PutItemCommand',
        'PutItemCommand',
        'PutItemCommand',
        'PutItemCommand',
        'PutItemCommand',
        'PutItemCommand',
        'QueryCommand',
      ]);
    } finally {
      recorder.stop();
    }
    expect(inbox.received).toHaveLength(2);
  });
});

describe('a subscription that keeps failing', () => {
  it('is failing once a delivery used up its retries, disabled after 3 days of it, and active after a success', async () => {
    let healthy = false;
    const inbox = await receiver(() => ({ status: healthy ? 200 : 503 }));
    const u = await newTenant('webhook-failing');
    const webhook = await subscribe(inbox.url, undefined, u.apiKey);
    const delivery = inProcess();
    const readWebhook = async () => (await call('GET', `${webhooksPath}/${webhook.id}`, { apiKey: u.apiKey })).body;
    /** Every retry of one event, the clock moved past each pause. */
    const exhaust = async () => {
      const [ref] = await delivery.deliverEvent(statusChanged(u.clientId));
      for (let i = 0; i < RETRY_DELAYS_SECONDS.length; i++) {
        // Past the longest pause with its jitter (8 h + 20 %), so every retry is due.
        clock.offset += 10 * 60 * 60 * 1000;
        expect((await delivery.attempt(ref!)).attempted).toBe(true);
      }
      return dynamoWebhookStore.getDelivery(ref!);
    };
    try {
      const failed = await exhaust();
      expect(failed).toMatchObject({ status: 'failed', attempts: RETRY_DELAYS_SECONDS.length + 1 });
      expect(await readWebhook()).toMatchObject({ status: 'failing', failingSince: expect.any(String) });
      clock.offset += DISABLE_AFTER_FAILING_MS;
      await exhaust();
      expect(await readWebhook()).toMatchObject({ status: 'disabled' });
      // Disabled: events pass it by; a test still reaches it, and its success makes it active again.
      expect(await delivery.deliverEvent(statusChanged(u.clientId))).toEqual([]);
      healthy = true;
      const test = await call('POST', `${webhooksPath}/${webhook.id}/test`, { apiKey: u.apiKey });
      expect(test.status).toBe(202);
      const ref = { clientId: u.clientId, webhookId: webhook.id, deliveryId: test.body.id };
      // The stack's timer may have sent it already; either way it ends delivered.
      await delivery.attempt(ref);
      await eventually(webhook.id, (d) => d.id === test.body.id && d.status === 'delivered', 15_000, u.apiKey);
      expect(await readWebhook()).toMatchObject({ status: 'active', failingSince: null });
    } finally {
      clock.offset = 2 * 60 * 60 * 1000;
    }
  }, 60_000);
});
