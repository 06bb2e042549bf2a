import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialsRefused, PayerUnavailable, PayerUrlRefused, TokenRejected } from '#lib/payer-api/errors';
import { postFhirOperation } from '#lib/payer-api/pas-transport';
import { jwksOf } from '#lib/payer-api/signing-keys/key-sets';
import { type SmartConnection, type TokenOptions, withToken } from '#lib/payer-api/smart/token-cache';
import { CLIENT_ASSERTION_TYPE, requestToken } from '#lib/payer-api/smart/token-client';
import { localSigningKey } from './signing-key.ts';
import { startPayer } from './token-server.ts';

const PAYER_CLIENT_ID = 'org-at-payer-42';

let payer: Awaited<ReturnType<typeof startPayer>>;
let signing: Awaited<ReturnType<typeof localSigningKey>>;
beforeAll(async () => {
  signing = await localSigningKey('api-client-1');
  payer = await startPayer(jwksOf(signing.keySet, new Date()), PAYER_CLIENT_ID);
});
afterAll(() => payer?.close());

/** A connection of its own per test: the cache is the module's, shared by the whole file. */
const connection = (): SmartConnection => ({
  apiClientId: 'api-client-1',
  connectionId: randomUUID(),
  payerClientId: PAYER_CLIENT_ID,
  tokenUrl: payer.tokenUrl,
  scope: 'system/Claim.write system/ClaimResponse.read',
});
const options = (now = () => Date.now()): TokenOptions => ({ keyOf: async () => signing.key, policy: 'local', now });
/** A PAS call with the token: what a run does inside withToken. */
const submit = (accessToken: string) =>
  postFhirOperation({
    baseUrl: payer.fhirBaseUrl,
    operation: 'Claim/$submit',
    accessToken,
    body: { resourceType: 'Bundle' },
    policy: 'local',
  });
const counts = () => ({ tokens: payer.state.tokenRequests, calls: payer.state.resourceCalls });
const since = (before: ReturnType<typeof counts>) => ({
  tokens: payer.state.tokenRequests - before.tokens,
  calls: payer.state.resourceCalls - before.calls,
});

describe('requestToken', () => {
  it('POSTs the client_credentials grant with a private_key_jwt assertion the payer verifies', async () => {
    const token = await requestToken({
      tokenUrl: payer.tokenUrl,
      clientId: PAYER_CLIENT_ID,
      scope: 'system/Claim.write',
      key: signing.key,
      policy: 'local',
    });
    expect(token.accessToken).toMatch(/^tok-\d+$/);
    expect(token.expiresAt - Date.now()).toBeGreaterThan(295_000);
    expect(payer.state.lastForm).toMatchObject({
      grant_type: 'client_credentials',
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      scope: 'system/Claim.write',
    });
    expect(payer.state.lastForm.client_assertion).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('calls a refused assertion CredentialsRefused, with the OAuth error when the payer gave one', async () => {
    const request = () =>
      requestToken({ tokenUrl: payer.tokenUrl, clientId: 'unknown', scope: 's', key: signing.key, policy: 'local' });
    await expect(request()).rejects.toEqual(new CredentialsRefused(401, 'invalid_client'));
    payer.state.refusal = { status: 400, body: '{"error":"invalid_client","error_description":"no such client"}' };
    try {
      const refused = await request().catch((error) => error);
      expect(refused).toBeInstanceOf(CredentialsRefused);
      expect(refused).toMatchObject({ status: 400, oauthError: 'invalid_client' });
      // Neither the assertion nor the payer's text is in the message.
      expect(refused.message).not.toMatch(/no such client|eyJ/);
      payer.state.refusal = { status: 401, body: '<html>nope</html>' };
      await expect(request()).rejects.toMatchObject({ name: 'CredentialsRefused', status: 401, oauthError: null });
    } finally {
      payer.state.refusal = null;
    }
  });

  it('calls 429 and 5xx PayerUnavailable, with Retry-After', async () => {
    payer.state.refusal = { status: 503, body: '', headers: { 'retry-after': '7' } };
    try {
      const error = await requestToken({
        tokenUrl: payer.tokenUrl,
        clientId: PAYER_CLIENT_ID,
        scope: 's',
        key: signing.key,
        policy: 'local',
      }).catch((caught) => caught);
      expect(error).toBeInstanceOf(PayerUnavailable);
      expect(error).toMatchObject({ status: 503, retryAfterSeconds: 7 });
    } finally {
      payer.state.refusal = null;
    }
  });

  it('sends nothing to an http URL unless the policy is local', async () => {
    const before = counts();
    await expect(
      requestToken({
        tokenUrl: payer.tokenUrl,
        clientId: PAYER_CLIENT_ID,
        scope: 's',
        key: signing.key,
        policy: 'https',
      }),
    ).rejects.toBeInstanceOf(PayerUrlRefused);
    expect(since(before)).toEqual({ tokens: 0, calls: 0 });
  });
});

describe('withToken: a token per connection, cached in memory', () => {
  it('reuses the token for later calls while it is fresh', async () => {
    const target = connection();
    const before = counts();
    const first = await withToken(target, submit, options());
    const second = await withToken(target, submit, options());
    expect(first.status).toBe(200);
    expect((second.body as { id: string }).id).toBe((first.body as { id: string }).id);
    expect(since(before)).toEqual({ tokens: 1, calls: 2 });
  });

  it('asks once for many concurrent calls, and keeps connections apart', async () => {
    const target = connection();
    const before = counts();
    const answers = await Promise.all(Array.from({ length: 5 }, () => withToken(target, submit, options())));
    expect(new Set(answers.map((answer) => (answer.body as { id: string }).id)).size).toBe(1);
    await withToken(connection(), submit, options());
    expect(since(before)).toEqual({ tokens: 2, calls: 6 });
  });

  it('asks for a new token shortly before the cached one expires: a tenth of its life, at most 60 s', async () => {
    const target = connection();
    let clock = Date.now();
    const now = () => clock;
    // The payer's clock moves with ours: it checks the assertions' times against it.
    payer.state.clock = now;
    const before = counts();
    await withToken(target, submit, options(now));
    // 300 s of life: refreshed from 30 s before its end.
    clock += 269_000;
    await withToken(target, submit, options(now));
    expect(since(before).tokens).toBe(1);
    clock += 2_000;
    await withToken(target, submit, options(now));
    expect(since(before).tokens).toBe(2);

    // An hour of life: refreshed from 60 s before its end.
    payer.state.expiresIn = 3600;
    try {
      const hourly = connection();
      const start = counts();
      await withToken(hourly, submit, options(now));
      clock += 3_539_000;
      await withToken(hourly, submit, options(now));
      expect(since(start).tokens).toBe(1);
      clock += 2_000;
      await withToken(hourly, submit, options(now));
      expect(since(start).tokens).toBe(2);
    } finally {
      payer.state.expiresIn = 300;
      payer.state.clock = Date.now;
    }
  });

  it('on a 401 from the payer drops the token, asks for a new one once and calls once more', async () => {
    const target = connection();
    await withToken(target, submit, options());
    payer.state.revoked.add(payer.state.issued.at(-1)!);
    const before = counts();
    const answer = await withToken(target, submit, options());
    expect(answer.status).toBe(200);
    expect(since(before)).toEqual({ tokens: 1, calls: 2 });
    // The new token is the one cached now.
    const after = counts();
    await withToken(target, submit, options());
    expect(since(after)).toEqual({ tokens: 0, calls: 1 });
  });

  it('gives up after that one retry: a second 401 is TokenRejected', async () => {
    const target = connection();
    const before = counts();
    const refusing = async () => {
      throw new TokenRejected();
    };
    await expect(withToken(target, refusing, options())).rejects.toBeInstanceOf(TokenRejected);
    expect(since(before)).toEqual({ tokens: 2, calls: 0 });
  });

  it('passes any other failure through without touching the token', async () => {
    const target = connection();
    await withToken(target, submit, options());
    const before = counts();
    await expect(
      withToken(
        target,
        async () => {
          throw new PayerUnavailable(503, null);
        },
        options(),
      ),
    ).rejects.toBeInstanceOf(PayerUnavailable);
    await withToken(target, submit, options());
    expect(since(before)).toEqual({ tokens: 0, calls: 1 });
  });

  it('uses every assertion once: each token request carries a new jti', () => {
    expect(new Set(payer.state.jtis).size).toBe(payer.state.jtis.length);
    expect(payer.state.jtis.length).toBeGreaterThan(5);
  });
});
