import { randomBytes, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { KeyConfigurationError } from '#lib/crypto/key-sources';
import { NotFound } from '#lib/errors';
import type { ApiEvent } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { type IdempotencyOptions, idempotentRequests } from '#lib/http/idempotency';
import { json } from '#lib/http/response';
import { lambdaContext } from '#local/gateway/invoke';

/*
 * The idempotency middleware driven directly, in the house stack, on the local stack's DynamoDB:
 * what needs control over timing (a first request still running, a record expiring) or over the
 * event (a duplicated header). The behaviour per route, over HTTP: idempotency.test.ts.
 */

/** A handler that counts its runs and, when told to, waits for a gate or fails. */
const harness = (options: IdempotencyOptions = {}) => {
  let runs = 0;
  let gate: Promise<void> | undefined;
  let failNext = false;
  const handler = endpoint<unknown>(
    async (event) => {
      runs += 1;
      const run = runs;
      await gate;
      if (failNext) {
        failNext = false;
        throw new NotFound('Thing 1');
      }
      return json(201, { run, body: event.body }, { Location: `/things/${run}` });
    },
    { json: {}, idempotency: idempotentRequests(options) },
  );
  return {
    invoke: (event: APIGatewayProxyEvent) => handler(event as unknown as ApiEvent<unknown>, lambdaContext('test')),
    get runs() {
      return runs;
    },
    /** The next runs wait until the returned function is called. */
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return () => {
        gate = undefined;
        release();
      };
    },
    failNext: () => {
      failNext = true;
    },
  };
};

const clientId = () => `client-${randomUUID()}`;
const newKey = () => `key-${randomUUID()}`;

const post = (
  client: string,
  body: unknown,
  headers: Record<string, string> = {},
  multiValueHeaders: Record<string, string[]> = {},
): APIGatewayProxyEvent =>
  ({
    httpMethod: 'POST',
    resource: '/things',
    path: '/things',
    pathParameters: null,
    headers: { 'Content-Type': 'application/json', ...headers },
    multiValueHeaders,
    body: JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: { authorizer: { clientId: client } },
  }) as unknown as APIGatewayProxyEvent;

describe('idempotency middleware', () => {
  it('answers 409 while the first request runs, without releasing its lock, then replays its response', async () => {
    const h = harness();
    const client = clientId();
    const key = newKey();
    const release = h.hold();
    const first = h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    await expect.poll(() => h.runs).toBe(1);

    for (let attempt = 0; attempt < 2; attempt += 1) {
      // Twice: had the first 409 released the lock, the second attempt would run the handler.
      const busy = await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
      expect(busy.statusCode).toBe(409);
      expect(busy.headers['Content-Type']).toMatch(/^application\/problem\+json/);
      expect(busy.headers['Retry-After']).toBe('1');
      expect(JSON.parse(busy.body)).toMatchObject({
        status: 409,
        title: 'Conflict',
        detail: expect.stringContaining('still in progress'),
      });
      expect(busy.body).not.toContain(key);
    }
    expect(h.runs).toBe(1);

    release();
    const done = await first;
    expect(done.statusCode).toBe(201);
    expect(done.headers['Idempotent-Replayed']).toBeUndefined();
    const replay = await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect(replay).toEqual({ ...done, headers: { ...done.headers, 'Idempotent-Replayed': 'true' } });
    expect(h.runs).toBe(1);
  });

  it('answers 422 to another body under a used key and keeps the first response for the right one', async () => {
    const h = harness();
    const client = clientId();
    const key = newKey();
    const first = await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    const other = await h.invoke(post(client, { a: 2 }, { 'Idempotency-Key': key }));
    expect(other.statusCode).toBe(422);
    expect(JSON.parse(other.body)).toMatchObject({
      status: 422,
      title: 'Unprocessable Entity',
      detail: expect.stringContaining('different request'),
    });
    const replay = await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect(replay.statusCode).toBe(201);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['Idempotent-Replayed']).toBe('true');
    expect(h.runs).toBe(1);
  });

  it('keeps nothing when the handler fails: a retry with the same key runs, with the same or another body', async () => {
    const h = harness();
    const client = clientId();
    const key = newKey();
    h.failNext();
    const failed = await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect(failed.statusCode).toBe(404);
    const corrected = await h.invoke(post(client, { a: 2 }, { 'Idempotency-Key': key }));
    expect(corrected.statusCode).toBe(201);
    expect(corrected.headers['Idempotent-Replayed']).toBeUndefined();
    expect(JSON.parse(corrected.body)).toEqual({ run: 2, body: { a: 2 } });
    expect(h.runs).toBe(2);
  });

  it('still replays a record fingerprinted under the previous key while a new key is rolled in', async () => {
    const [oldKey, newFingerprintKey] = [randomBytes(32), randomBytes(32)];
    const before = harness({ fingerprintKeys: async () => [oldKey] });
    const rolling = harness({ fingerprintKeys: async () => [newFingerprintKey, oldKey] });
    const after = harness({ fingerprintKeys: async () => [newFingerprintKey] });
    const client = clientId();
    const key = newKey();
    const first = await before.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect(first.statusCode).toBe(201);

    const replay = await rolling.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect(replay).toEqual({ ...first, headers: { ...first.headers, 'Idempotent-Replayed': 'true' } });
    expect((await rolling.invoke(post(client, { a: 2 }, { 'Idempotency-Key': key }))).statusCode).toBe(422);
    // Once the old key is dropped its records no longer match: hence the 24-hour overlap (docs/idempotency.md).
    expect((await after.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }))).statusCode).toBe(422);
    expect([before.runs, rolling.runs, after.runs]).toEqual([1, 0, 0]);
  });

  it('fails closed when the fingerprint key cannot be read: 500, nothing runs, the key stays free', async () => {
    const broken = harness({
      fingerprintKeys: () => Promise.reject(new KeyConfigurationError('No idempotency fingerprint key')),
    });
    const client = clientId();
    const key = newKey();
    const res = await broken.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('fingerprint');
    expect(broken.runs).toBe(0);
    const working = harness();
    expect((await working.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }))).statusCode).toBe(201);
  });

  it('runs an expired key afresh', async () => {
    const h = harness({ expiresAfterSeconds: 1 });
    const client = clientId();
    const key = newKey();
    const first = await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect((await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }))).headers['Idempotent-Replayed']).toBe(
      'true',
    );
    // The expiry is rounded to whole seconds: 1 s from now is at most 1.5 s away.
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    const again = await h.invoke(post(client, { a: 1 }, { 'Idempotency-Key': key }));
    expect(again.statusCode).toBe(201);
    expect(again.headers['Idempotent-Replayed']).toBeUndefined();
    expect(again.body).not.toBe(first.body);
    expect(h.runs).toBe(2);
  });

  it('runs every request without the header', async () => {
    const h = harness();
    const client = clientId();
    for (const expected of [1, 2]) {
      const res = await h.invoke(post(client, { a: 1 }));
      expect(res.statusCode).toBe(201);
      expect(res.headers['Idempotent-Replayed']).toBeUndefined();
      expect(JSON.parse(res.body).run).toBe(expected);
    }
  });

  it('refuses a key with control characters with 400', async () => {
    const h = harness();
    for (const key of ['nul\u0000', 'esc\u001b[0m', 'del\u007f', 'line\nbreak']) {
      const res = await h.invoke(post(clientId(), { a: 1 }, { 'Idempotency-Key': key }));
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ status: 400, header: 'Idempotency-Key' });
    }
    expect(h.runs).toBe(0);
  });

  it('refuses a repeated header with 400', async () => {
    const h = harness();
    const key = newKey();
    const res = await h.invoke(
      post(clientId(), { a: 1 }, { 'Idempotency-Key': key }, { 'Idempotency-Key': [`${key}-other`, key] }),
    );
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, header: 'Idempotency-Key' });
    expect(h.runs).toBe(0);
  });
});
