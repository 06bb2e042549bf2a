import { readFile } from 'node:fs/promises';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { webhookEntity } from '#lib/entities/webhook';
import { MAX_WEBHOOKS_PER_CLIENT } from '#lib/webhooks/webhook-context';
import { call, newTenant } from '#test/support/api';

/**
 * Webhook subscriptions over HTTP against the local stack (docs/webhooks.md): create, read, list,
 * delete, rotate the secret; validation; another client's and another organization's subscriptions
 * are 404; the secret is shown once, stored sealed and never logged.
 */
const webhooksPath = '/api/external/v1.1/Webhooks';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

type Tenant = Awaited<ReturnType<typeof newTenant>>;
let t: Tenant;
let other: Tenant;
const shownSecrets: string[] = [];

const subscribe = async (apiKey: string, body: Record<string, unknown> = {}) => {
  const res = await call('POST', webhooksPath, {
    apiKey,
    body: { url: 'https://hooks.example.com/service-review', events: ['authorization.status_changed'], ...body },
  });
  expect(res.status, res.text).toBe(201);
  shownSecrets.push(res.body.secret);
  return res.body as Record<string, any>;
};

beforeAll(async () => {
  [t, other] = await Promise.all([newTenant('webhooks'), newTenant('webhooks-other')]);
});

describe('webhook subscriptions', () => {
  it('creates one: 201, Location, its fields, and the secret this once', async () => {
    const res = await call('POST', webhooksPath, {
      apiKey: t.apiKey,
      body: {
        url: 'https://Hooks.Example.com/in?src=sr',
        events: ['automation.batch_finished', 'authorization.status_changed'],
        description: 'Front desk',
      },
    });
    expect(res.status, res.text).toBe(201);
    shownSecrets.push(res.body.secret);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      url: 'https://hooks.example.com/in?src=sr',
      events: ['automation.batch_finished', 'authorization.status_changed'],
      description: 'Front desk',
      status: 'active',
      organizationId: null,
      failingSince: null,
      secretCreatedAt: res.body.createdAt,
      previousSecretExpiresAt: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: res.body.createdAt,
      secret: expect.stringMatching(SECRET),
    });
    expect(Buffer.from(res.body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(res.headers.get('location')).toBe(`${webhooksPath}/${res.body.id}`);

    const read = await call('GET', `${webhooksPath}/${res.body.id}`, { apiKey: t.apiKey });
    expect(read.status).toBe(200);
    const { secret, ...withoutSecret } = res.body;
    expect(read.body).toEqual(withoutSecret);
    expect(read.text).not.toContain(secret.slice(6));
    const list = await call('GET', webhooksPath, { apiKey: t.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.items).toContainEqual(withoutSecret);
    expect(list.text).not.toContain(secret.slice(6));
  });

  it('stores the secret sealed: the item holds an envelope, not the secret', async () => {
    const created = await subscribe(t.apiKey);
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: webhookEntity.key({ clientId: t.clientId, webhookId: created.id }),
      }),
    );
    expect(Item?.secretEnvelope).toMatchObject({ v: 2, keyring: 'local', message: expect.any(String) });
    const raw = Buffer.from(created.secret.slice(6), 'base64');
    const stored = JSON.stringify(Item);
    for (const form of [created.secret.slice(6), raw.toString('hex'), raw.toString('base64url')]) {
      expect(stored).not.toContain(form);
    }
  });

  it('rotates the secret: a new one shown once, the previous one signing for 24 hours', async () => {
    const created = await subscribe(t.apiKey);
    const before = Date.now();
    const res = await call('POST', `${webhooksPath}/${created.id}/rotate-secret`, { apiKey: t.apiKey });
    expect(res.status, res.text).toBe(200);
    shownSecrets.push(res.body.secret);
    expect(res.body.secret).toMatch(SECRET);
    expect(res.body.secret).not.toBe(created.secret);
    const expires = Date.parse(res.body.previousSecretExpiresAt);
    expect(expires - before).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(expires - before).toBeLessThan(24 * 3600_000 + 60_000);
    const read = await call('GET', `${webhooksPath}/${created.id}`, { apiKey: t.apiKey });
    expect(read.text).not.toContain(res.body.secret.slice(6));
  });

  it('deletes one: 204, then 404 on every route', async () => {
    const created = await subscribe(t.apiKey);
    const url = `${webhooksPath}/${created.id}`;
    expect((await call('DELETE', url, { apiKey: t.apiKey })).status).toBe(204);
    expect((await call('GET', url, { apiKey: t.apiKey })).status).toBe(404);
    expect((await call('DELETE', url, { apiKey: t.apiKey })).status).toBe(404);
    expect((await call('POST', `${url}/test`, { apiKey: t.apiKey })).status).toBe(404);
    expect((await call('GET', webhooksPath, { apiKey: t.apiKey })).body.items.map((w: any) => w.id)).not.toContain(
      created.id,
    );
  });

  it("answers 404 for another client's subscription, on every route, and changes nothing", async () => {
    const theirs = await subscribe(other.apiKey);
    const url = `${webhooksPath}/${theirs.id}`;
    const as = { apiKey: t.apiKey };
    expect((await call('GET', url, as)).status).toBe(404);
    expect((await call('DELETE', url, as)).status).toBe(404);
    expect((await call('POST', `${url}/rotate-secret`, as)).status).toBe(404);
    expect((await call('POST', `${url}/test`, as)).status).toBe(404);
    expect((await call('GET', `${url}/deliveries`, as)).status).toBe(404);
    const deliveryId = '0190f0f0-0000-7000-8000-000000000000';
    expect((await call('POST', `${url}/deliveries/${deliveryId}/redeliver`, as)).status).toBe(404);
    expect((await call('GET', webhooksPath, as)).body.items.map((w: any) => w.id)).not.toContain(theirs.id);
    const { secret: _, ...unchanged } = theirs;
    expect((await call('GET', url, { apiKey: other.apiKey })).body).toEqual(unchanged);
  });

  it('refuses ids that are not UUIDs with 400', async () => {
    const res = await call('GET', `${webhooksPath}/not-a-uuid`, { apiKey: t.apiKey });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ parameter: 'webhookId' });
    const bad = await call('POST', `${webhooksPath}/${crypto.randomUUID()}/deliveries/nope/redeliver`, {
      apiKey: t.apiKey,
    });
    expect(bad.status).toBe(400);
  });
});

describe('webhook subscription bodies', () => {
  const refused = async (body: unknown) => {
    const res = await call('POST', webhooksPath, { apiKey: t.apiKey, body });
    expect(res.status, res.text).toBe(400);
    return res.body;
  };

  it('refuses a body that fails the schema with the Validation result', async () => {
    const url = 'https://hooks.example.com/x';
    expect(await refused({ url })).toMatchObject({
      succeeded: false,
      errors: ["/: Required error. must have required property 'events'."],
    });
    expect((await refused({ url, events: [] })).errors[0]).toMatch(/^\/events: MinItems error/);
    expect((await refused({ url, events: ['request.created'] })).errors[0]).toMatch(/^\/events\/0: Enum error/);
    // A test event goes to the subscription it tests, whatever it lists: not a type to subscribe to.
    expect((await refused({ url, events: ['webhook.test'] })).errors[0]).toMatch(/^\/events\/0: Enum error/);
    expect((await refused({ url, events: ['automation.run_finished', 'automation.run_finished'] })).errors[0]).toMatch(
      /^\/events: UniqueItems error/,
    );
    expect((await refused({ url: 'ftp://hooks.example.com/', events: ['automation.run_finished'] })).errors[0]).toMatch(
      /^\/url: Pattern error/,
    );
    expect((await refused({ url, events: ['automation.run_finished'], secret: 'whsec_mine' })).errors[0]).toMatch(
      /AdditionalProperties error. must NOT have additional property 'secret'/,
    );
    expect((await refused({ url: 'x'.repeat(2049), events: ['automation.run_finished'] })).errors[0]).toMatch(
      /^\/url: MaxLength error/,
    );
  });

  it.each([
    ['user info', 'https://user:pw@hooks.example.com/'],
    ['a fragment', 'https://hooks.example.com/#x'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data'],
    ['the metadata address, in decimal', 'http://2852039166/'],
    ['the metadata address, in hex', 'http://0xa9.0xfe.0xa9.0xfe/'],
    ['the metadata address, IPv4-mapped', 'http://[::ffff:169.254.169.254]/'],
    ['the IPv6 metadata address', 'http://[fd00:ec2::254]/'],
    ['a link-local address', 'http://169.254.10.20:8080/'],
    ['an IPv6 link-local address', 'http://[fe80::1]/'],
    ['a private address', 'https://10.0.0.5/hook'],
    ['a CGNAT address', 'https://100.64.1.1/hook'],
    ['a multicast address', 'https://[ff02::1]/hook'],
    ['the unspecified address', 'http://0.0.0.0:3000/'],
  ])('refuses a URL with %s (400, field url); nothing is created', async (_, url) => {
    const before = (await call('GET', webhooksPath, { apiKey: t.apiKey })).body.items.length;
    const body = await refused({ url, events: ['automation.run_finished'] });
    expect(body).toMatchObject({ status: 400, field: 'url' });
    expect(JSON.stringify(body)).not.toContain(url);
    expect((await call('GET', webhooksPath, { apiKey: t.apiKey })).body.items).toHaveLength(before);
  });

  it('accepts http and loopback here, the local stack (https and public addresses only on AWS)', async () => {
    const created = await subscribe(t.apiKey, { url: 'http://127.0.0.1:9/hook' });
    expect(created.url).toBe('http://127.0.0.1:9/hook');
    const localhost = await subscribe(t.apiKey, { url: 'http://localhost:9/hook' });
    expect(localhost.url).toBe('http://localhost:9/hook');
    for (const id of [created.id, localhost.id]) await call('DELETE', `${webhooksPath}/${id}`, { apiKey: t.apiKey });
  });
});

describe('a client’s subscriptions are bounded', () => {
  it(`creates at most ${MAX_WEBHOOKS_PER_CLIENT}, even when asked concurrently, and counts deletes`, async () => {
    const tenant = await newTenant('webhooks-limit');
    const attempts = await Promise.all(
      Array.from({ length: MAX_WEBHOOKS_PER_CLIENT + 3 }, () =>
        call('POST', webhooksPath, {
          apiKey: tenant.apiKey,
          body: { url: 'https://hooks.example.com/x', events: ['automation.run_finished'] },
        }),
      ),
    );
    const statuses = attempts.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(MAX_WEBHOOKS_PER_CLIENT);
    expect(statuses.filter((status) => status === 409)).toHaveLength(3);
    expect(attempts.find((res) => res.status === 409)!.body).toMatchObject({ limit: MAX_WEBHOOKS_PER_CLIENT });
    expect((await call('GET', webhooksPath, { apiKey: tenant.apiKey })).body.items).toHaveLength(
      MAX_WEBHOOKS_PER_CLIENT,
    );
    const one = attempts.find((res) => res.status === 201)!.body;
    expect((await call('DELETE', `${webhooksPath}/${one.id}`, { apiKey: tenant.apiKey })).status).toBe(204);
    const again = await call('POST', webhooksPath, {
      apiKey: tenant.apiKey,
      body: { url: 'https://hooks.example.com/x', events: ['automation.run_finished'] },
    });
    expect(again.status, again.text).toBe(201);
  });
});

describe('webhook subscriptions under an organization-restricted key', () => {
  it("are that organization's: its key sees only them, the client's key sees all", async () => {
    const tenant = await newTenant('webhooks-org');
    const { organizationId: orgB } = await tenant.admin.createOrganization(tenant.clientId, 'Org B');
    const { apiKey: keyA } = await tenant.admin.createApiKey(tenant.clientId, undefined, {
      organizationId: tenant.organizationId,
    });
    const { apiKey: keyB } = await tenant.admin.createApiKey(tenant.clientId, undefined, { organizationId: orgB });
    const ofA = await subscribe(keyA);
    const ofB = await subscribe(keyB);
    const ofClient = await subscribe(tenant.apiKey);
    expect([ofA.organizationId, ofB.organizationId, ofClient.organizationId]).toEqual([
      tenant.organizationId,
      orgB,
      null,
    ]);

    const idsFor = async (apiKey: string) =>
      (await call('GET', webhooksPath, { apiKey })).body.items.map((w: any) => w.id).sort();
    expect(await idsFor(keyA)).toEqual([ofA.id]);
    expect(await idsFor(keyB)).toEqual([ofB.id]);
    expect(await idsFor(tenant.apiKey)).toEqual([ofA.id, ofB.id, ofClient.id].sort());

    for (const [apiKey, id] of [
      [keyA, ofB.id],
      [keyA, ofClient.id],
      [keyB, ofA.id],
    ] as const) {
      const url = `${webhooksPath}/${id}`;
      expect((await call('GET', url, { apiKey })).status).toBe(404);
      expect((await call('DELETE', url, { apiKey })).status).toBe(404);
      expect((await call('POST', `${url}/rotate-secret`, { apiKey })).status).toBe(404);
      expect((await call('POST', `${url}/test`, { apiKey })).status).toBe(404);
      expect((await call('GET', `${url}/deliveries`, { apiKey })).status).toBe(404);
    }
    expect((await call('GET', `${webhooksPath}/${ofA.id}`, { apiKey: keyA })).status).toBe(200);
    expect((await call('GET', `${webhooksPath}/${ofA.id}`, { apiKey: tenant.apiKey })).status).toBe(200);
    expect(await idsFor(tenant.apiKey)).toHaveLength(3);
  });
});

describe('the signing secret is never logged', () => {
  it('appears nowhere in what the stack wrote', async () => {
    expect(shownSecrets.length).toBeGreaterThan(3);
    const output = await readFile(inject('stackOutputFile'), 'utf8');
    for (const secret of shownSecrets) {
      const raw = Buffer.from(secret.slice(6), 'base64');
      for (const form of [secret.slice(6), raw.toString('hex'), raw.toString('base64url')]) {
        expect(output).not.toContain(form);
      }
    }
  });
});
