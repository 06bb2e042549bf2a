import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Authorization } from '#lib/entities/request';
import { uuidv7 } from '#lib/ids';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { scraperTokenKeys, scraperTokens } from '#lib/runs/scraper-token';
import { baseUrl, call, newTenant, uniqueId } from '#test/support/api';
import { batchPath, newPortalAccount, newRequest, png, rpaOf, serviceReviews, storedRun } from './rpa-support.ts';

/*
 * The automation's endpoints over HTTP, without executions: the scraper token and the scraper
 * session (runs are written here as the worker writes them), and every refusal of the endpoints
 * that start or read executions. Starting executions is covered with a test double of the
 * AutomationStarter in rpa-service.test.ts.
 */
let tenant: Awaited<ReturnType<typeof newTenant>>;
let other: Awaited<ReturnType<typeof newTenant>>;
let externalId: string;

beforeAll(async () => {
  [tenant, other] = await Promise.all([newTenant('rpa'), newTenant('rpa-other')]);
  externalId = await newRequest(tenant.apiKey);
});

const expectProblem = (res: { status: number; headers: Headers; body: any }, status: number) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'about:blank', status, detail: expect.any(String) });
};

const validationResult = (...errors: string[]) => ({ succeeded: false, errors, type: 'none' });

const accessToken = async (id = externalId, clientUserId = tenant.clientUserId) => {
  const res = await call('POST', rpaOf(id), { apiKey: tenant.apiKey, body: { clientUserId } });
  expect(res.status, res.text).toBe(200);
  return res.body as { accessToken: string; scraperUri: string };
};

const session = (id: string, options: { token?: string; query?: string; accept?: string } = {}) =>
  call('GET', `${rpaOf(id)}/session${options.query ?? ''}`, {
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.accept ? { accept: options.accept } : {}),
    },
  });

describe('POST …/{requestExternalId}/rpa: the scraper token', () => {
  it('answers 200 {accessToken, scraperUri}: a 15-minute token for that request and user, an absolute URI', async () => {
    const res = await call('POST', rpaOf(externalId), {
      apiKey: tenant.apiKey,
      body: { clientUserId: tenant.clientUserId },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(['accessToken', 'scraperUri']);
    expect(res.body.scraperUri).toBe(`${baseUrl}${serviceReviews}/${externalId}/rpa/session`);
    expect(res.body.scraperUri).not.toContain(res.body.accessToken);
    const claims = decodeJwt(res.body.accessToken);
    expect(claims).toMatchObject({
      iss: 'service-review-api',
      aud: 'scraper-session',
      sub: tenant.clientUserId,
      cid: tenant.clientId,
      req: externalId,
    });
    expect(claims.exp! - claims.iat!).toBe(900);
  });

  it('requires the body: missing, empty or mistyped → 400 Validation result', async () => {
    const required = validationResult("/: Required error. must have required property 'clientUserId'.");
    const cases: Array<[Parameters<typeof call>[2], object]> = [
      [{}, required],
      [{ rawBody: '', headers: { 'content-type': 'application/json' } }, required],
      [{ body: {} }, required],
      [
        { body: { clientUserId: 42 } },
        validationResult('/clientUserId: Type error for value "42". Message: must be string.'),
      ],
      [{ body: [] }, validationResult('/: Type error. must be object.')],
      [
        { body: { clientUserId: tenant.clientUserId, extra: 1 } },
        validationResult("/: AdditionalProperties error. must NOT have additional property 'extra'."),
      ],
    ];
    for (const [options, expected] of cases) {
      const res = await call('POST', rpaOf(externalId), { apiKey: tenant.apiKey, ...options });
      expect(res.status, JSON.stringify(options)).toBe(400);
      expect(res.body).toEqual(expected);
    }
  });

  it('answers 404 for an unknown request, another client’s request, or a client user that is not the caller’s', async () => {
    const othersRequest = await newRequest(other.apiKey);
    for (const [id, clientUserId, what] of [
      ['NOPE-1', tenant.clientUserId, 'Request NOPE-1'],
      [othersRequest, tenant.clientUserId, `Request ${othersRequest}`],
      [externalId, other.clientUserId, `Client user ${other.clientUserId}`],
      [externalId, 'nobody', 'Client user nobody'],
    ] as const) {
      const res = await call('POST', rpaOf(id), { apiKey: tenant.apiKey, body: { clientUserId } });
      expectProblem(res, 404);
      expect(res.body.detail).toBe(`${what} was not found.`);
    }
  });

  it('needs an API key', async () => {
    const res = await call('POST', rpaOf(externalId), { body: { clientUserId: tenant.clientUserId } });
    expectProblem(res, 401);
  });

  it('…/rpa/url no longer exists: 404 whatever the method', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await call(method, `${rpaOf(externalId)}/url`, {
        apiKey: tenant.apiKey,
        ...(method === 'POST' ? { body: { clientUserId: tenant.clientUserId } } : {}),
      });
      expectProblem(res, 404);
      expect(res.body.detail).toBe('No endpoint matches this method and path.');
    }
  });
});

describe('GET …/{requestExternalId}/rpa/session: the scraper session', () => {
  it('answers 401 without a token, with nothing of the request', async () => {
    for (const res of [await session(externalId), await session(externalId, { query: '?token=' })]) {
      expectProblem(res, 401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
      expect(res.text).not.toContain(externalId);
    }
  });

  it('does not take the API key instead', async () => {
    const res = await call('GET', `${rpaOf(externalId)}/session`, { apiKey: tenant.apiKey });
    expectProblem(res, 401);
  });

  it('answers 401 for an expired, tampered, foreign or malformed token, or one for another request', async () => {
    const grant = {
      clientId: tenant.clientId,
      keyId: tenant.keyId,
      clientUserId: tenant.clientUserId,
      requestExternalId: externalId,
    };
    const expired = await scraperTokens(scraperTokenKeys, () => new Date(Date.now() - 16 * 60_000)).sign(grant);
    const foreign = await scraperTokens(async () => [Buffer.alloc(32, 7)]).sign(grant);
    const { accessToken: valid } = await accessToken();
    const [header, payload, signature] = valid.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, cid: other.clientId })).toString('base64url')}.${signature}`;
    const anotherRequest = await newRequest(tenant.apiKey);
    const forAnother = (await accessToken(anotherRequest)).accessToken;

    for (const [label, token] of [
      ['expired', expired.token],
      ['foreign key', foreign.token],
      ['tampered', tampered],
      ['malformed', 'not-a-token'],
      ['another request', forAnother],
    ] as const) {
      const res = await session(externalId, { token });
      expect(res.status, label).toBe(401);
      expect(res.text, label).not.toContain(externalId);
    }
  });

  it("answers 404 for a valid token of another client's request (its key names that client's items only)", async () => {
    const othersRequest = await newRequest(other.apiKey);
    // A token for the same id in another client: signed by us, yet it opens nothing of this client.
    const token = await scraperTokens().sign({
      clientId: tenant.clientId,
      keyId: tenant.keyId,
      clientUserId: tenant.clientUserId,
      requestExternalId: othersRequest,
    });
    expectProblem(await session(othersRequest, { token: token.token }), 404);
  });

  it('answers JSON: the request’s latest runs, newest first, with 60-second screenshot URLs', async () => {
    const id = await newRequest(tenant.apiKey);
    const older = await storedRun(tenant, id, {}, new Date(Date.now() - 60_000));
    const newer = await storedRun(tenant, id, { status: 'running', outcome: undefined });
    const { accessToken: token } = await accessToken(id);

    const res = await session(id, { token });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.body).toMatchObject({
      requestExternalId: id,
      clientUserId: tenant.clientUserId,
      tokenExpiresAt: expect.any(String),
      authorization: { status: 'not_submitted', number: null },
      authorizationHistory: [],
    });
    expect(res.body.runs.map((run: { runId: string }) => run.runId)).toEqual([newer.runId, older.runId]);
    const [, shown] = res.body.runs;
    expect(shown).toMatchObject({
      runId: older.runId,
      kind: 'view-on-page',
      status: 'succeeded',
      outcome: 'form_filled',
      steps: older.steps,
      enteredValues: older.enteredValues,
      screenshots: [
        { n: 1, label: 'the filled form, before submitting', capturedAt: older.createdAt, url: expect.any(String) },
      ],
    });
    expect(shown.screenshots[0].url).not.toContain(token);
    const image = await fetch(shown.screenshots[0].url);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await image.arrayBuffer())).toEqual(png(older.runId));
    const ttl = Date.parse(shown.screenshots[0].urlExpiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('shows at most the 10 latest runs', async () => {
    const id = await newRequest(tenant.apiKey);
    const start = Date.now() - 3_600_000;
    const runs = [];
    for (let i = 0; i < 12; i++) runs.push(await storedRun(tenant, id, {}, new Date(start + i * 1000)));
    const { accessToken: token } = await accessToken(id);
    const res = await session(id, { token });
    expect(res.body.runs.map((run: { runId: string }) => run.runId)).toEqual(
      runs
        .slice(2)
        .reverse()
        .map((run) => run.runId),
    );
  });

  it('answers a page to a browser: escaped, self-contained, under a strict CSP', async () => {
    const id = await newRequest(tenant.apiKey);
    const run = await storedRun(tenant, id, {
      status: 'running',
      outcome: undefined,
      enteredValues: {
        memberId: { value: '<script>alert(1)</script>', readBack: true },
        note: { value: 'A & "B"', readBack: null },
      },
    });
    const { accessToken: token } = await accessToken(id);
    const res = await session(id, { token, accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    const s3Origin = new URL((await session(id, { token })).body.runs[0].screenshots[0].url as string).origin;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`img-src ${s3Origin}`);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');

    const html = res.text;
    expect(html).toContain('<meta http-equiv="refresh" content="5">');
    expect(html).toContain(run.runId);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script');
    expect(html).toContain('A &amp; &quot;B&quot;');
    // Each value typed, with whether the portal's page read it back the same (a run recorded before: not checked).
    expect(html).toContain('<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><td>the same</td>');
    expect(html).toContain('<td>A &amp; &quot;B&quot;</td><td>not checked</td>');
    // Nothing is loaded from anywhere but the screenshots' origin.
    const sources = [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((match) => match[1]!);
    expect(sources).toHaveLength(1);
    expect(sources[0]!.startsWith(`${s3Origin}/`)).toBe(true);
  });

  it('shows the 10 latest changes of the request’s authorization, newest first, in JSON and on the page', async () => {
    const id = await newRequest(tenant.apiKey);
    const { accessToken: token } = await accessToken(id);
    const before = await session(id, { token, accept: 'text/html' });
    expect(before.text).toContain('<h2>Authorization history</h2>\n<p class="muted">No change yet.</p>');

    // Twelve changes as the worker and the API write them (setAuthorization): pending and approved in turn.
    const runIds: string[] = [];
    for (let i = 1; i <= 12; i++) {
      const at = new Date(Date.UTC(2026, 2, 1, 9, i)).toISOString();
      const next: Authorization =
        i % 2 === 1
          ? { status: 'pending', number: null, decisionDate: null, lastCheckedAt: at }
          : { status: 'approved', number: `SBX-AUTH-${i}`, decisionDate: '2026-03-01', lastCheckedAt: at };
      const runId = uuidv7();
      runIds.push(runId);
      const changedBy = i === 12 ? ({ kind: 'api', requestId: 'req-<b>' } as const) : ({ kind: 'run', runId } as const);
      await setAuthorization(dynamoRequestStore, { clientId: tenant.clientId, externalId: id }, next, changedBy, at);
    }

    const res = await session(id, { token });
    expect(res.status, res.text).toBe(200);
    const history = await call('GET', `/api/external/v1.1/Requests/${id}/authorization/history?pageSize=10`, {
      apiKey: tenant.apiKey,
    });
    expect(res.body.authorizationHistory).toHaveLength(10);
    expect(res.body.authorizationHistory).toEqual(history.body.items);
    expect(res.body.authorizationHistory[0]).toEqual({
      changeId: expect.any(String),
      changedAt: '2026-03-01T09:12:00.000Z',
      previous: { status: 'pending', number: null, decisionDate: null },
      current: { status: 'approved', number: 'SBX-AUTH-12', decisionDate: '2026-03-01' },
      changedBy: { kind: 'api', requestId: 'req-<b>' },
      items: [],
      reasons: [],
      informationRequested: null,
    });
    expect(res.body.authorizationHistory.at(-1)).toMatchObject({
      changedAt: '2026-03-01T09:03:00.000Z',
      changedBy: { kind: 'run', runId: runIds[2] },
    });
    expect(res.body.authorization).toMatchObject({ status: 'approved', number: 'SBX-AUTH-12' });

    const page = (await session(id, { token, accept: 'text/html' })).text;
    const table = /<table id="authorization-history">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
    const rows = [...table.matchAll(/<tr data-change-id="([^"]+)">(.*?)<\/tr>/g)];
    expect(rows.map((row) => row[1])).toEqual(
      res.body.authorizationHistory.map((entry: { changeId: string }) => entry.changeId),
    );
    expect(rows[0]![2]).toContain('<td>pending</td><td class="status">approved SBX-AUTH-12 decided 2026-03-01</td>');
    expect(rows[0]![2]).toContain('API call <code>req-&lt;b&gt;</code>');
    expect(rows[1]![2]).toContain(`run <code>${runIds[10]}</code>`);
    expect(page).not.toContain('req-<b>');
  });

  it('stops refreshing the page once no run is queued or running', async () => {
    const id = await newRequest(tenant.apiKey);
    await storedRun(tenant, id);
    const { accessToken: token } = await accessToken(id);
    const res = await session(id, { token, accept: 'text/html' });
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).not.toContain('http-equiv="refresh"');
    // JSON to clients that do not prefer HTML.
    for (const accept of ['application/json', '*/*', 'text/html;q=0.5, application/json']) {
      expect((await session(id, { token, accept })).headers.get('content-type'), accept).toMatch(/^application\/json/);
    }
  });
});

describe('view-on-page, runs and batches: refusals before anything starts', () => {
  it('view-on-page: the body is required and validated; unknown request or client user → 404', async () => {
    const path = `${rpaOf(externalId)}/view-on-page`;
    const required = validationResult("/: Required error. must have required property 'clientUserId'.");
    expect((await call('POST', path, { apiKey: tenant.apiKey })).body).toEqual(required);
    expect((await call('POST', path, { apiKey: tenant.apiKey, body: {} })).body).toEqual(required);
    expectProblem(
      await call('POST', `${rpaOf('NOPE-2')}/view-on-page`, {
        apiKey: tenant.apiKey,
        body: { clientUserId: tenant.clientUserId },
      }),
      404,
    );
    expectProblem(await call('POST', path, { apiKey: tenant.apiKey, body: { clientUserId: other.clientUserId } }), 404);
    expectProblem(await call('POST', path, { body: { clientUserId: tenant.clientUserId } }), 401);
  });

  it('a run: 400 for a run id that is not a UUID, 404 for an unknown or another client’s run', async () => {
    const run = await storedRun(tenant, externalId);
    const path = (id: string) => `${rpaOf(externalId)}/runs/${id}`;
    const res = await call('GET', path(run.runId), { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      runId: run.runId,
      requestExternalId: externalId,
      status: 'succeeded',
      outcome: 'form_filled',
      screenshots: [{ n: 1, label: 'the filled form, before submitting' }],
    });
    expect(res.body.screenshots[0]).not.toHaveProperty('objectKey');
    expectProblem(await call('GET', path('not-a-uuid'), { apiKey: tenant.apiKey }), 400);
    expectProblem(await call('GET', path(crypto.randomUUID()), { apiKey: tenant.apiKey }), 404);
    expectProblem(await call('GET', path(run.runId), { apiKey: other.apiKey }), 404);
    expectProblem(await call('GET', `${rpaOf(uniqueId('x'))}/runs/${run.runId}`, { apiKey: tenant.apiKey }), 404);
  });

  it('a batch: 1 to 25 distinct ids, validated; unknown requests → 404 naming them; unknown batch → 404', async () => {
    const body = (requestExternalIds: unknown) => ({ clientUserId: tenant.clientUserId, requestExternalIds });
    const post = (payload?: unknown) =>
      call('POST', batchPath, { apiKey: tenant.apiKey, ...(payload === undefined ? {} : { body: payload }) });
    expect((await post()).body).toEqual(
      validationResult("/: Required error. must have required properties 'clientUserId', 'requestExternalIds'."),
    );
    expect((await post(body([]))).body).toEqual(
      validationResult('/requestExternalIds: MinItems error. must NOT have fewer than 1 items.'),
    );
    const tooMany = Array.from({ length: 26 }, (_, i) => `R-${i}`);
    expect((await post(body(tooMany))).body).toEqual(
      validationResult('/requestExternalIds: MaxItems error. must NOT have more than 25 items.'),
    );
    const duplicate = await post(body([externalId, externalId]));
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.errors).toEqual([expect.stringMatching(/^\/requestExternalIds: UniqueItems error\./)]);
    expect((await post(body(['bad/id']))).status).toBe(400);

    const missing = await post(body([externalId, 'NOPE-3', 'NOPE-4']));
    expectProblem(missing, 404);
    expect(missing.body.requestExternalIds).toEqual(['NOPE-3', 'NOPE-4']);
    expect(missing.body.detail).toBe('Requests not found: NOPE-3, NOPE-4. No check was started.');
    expectProblem(await post({ clientUserId: other.clientUserId, requestExternalIds: [externalId] }), 404);

    expectProblem(await call('GET', `${batchPath}/${crypto.randomUUID()}`, { apiKey: tenant.apiKey }), 404);
    expectProblem(await call('GET', `${batchPath}/nope`, { apiKey: tenant.apiKey }), 400);
  });
});

describe('starts the automation cannot take', () => {
  it('422 names why no portal account can be chosen; 429 with Retry-After past a quota; nothing is queued', async () => {
    const t = await newTenant('rpa-refusals');
    const request = await newRequest(t.apiKey);
    const none = await call('POST', `${rpaOf(request)}/view-on-page`, {
      apiKey: t.apiKey,
      body: { clientUserId: t.clientUserId },
    });
    expect(none.status, none.text).toBe(422);
    expect(none.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(none.body).toMatchObject({ status: 422, reason: 'no_active_account', requestExternalId: request });
    const named = await call('POST', `${rpaOf(request)}/view-on-page`, {
      apiKey: t.apiKey,
      body: { clientUserId: t.clientUserId, portalAccountExternalId: 'no-such-account' },
    });
    expect(named.status, named.text).toBe(404);

    await newPortalAccount(t);
    await t.admin.setAutomationQuotas(t.clientId, { automationRunsPerHour: 0 });
    for (const [path, body] of [
      [`${rpaOf(request)}/view-on-page`, { clientUserId: t.clientUserId }],
      [batchPath, { clientUserId: t.clientUserId, requestExternalIds: [request] }],
    ] as const) {
      const res = await call('POST', path, { apiKey: t.apiKey, body });
      expect(res.status, res.text).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
      expect(res.body).toMatchObject({ status: 429, quota: 'runsPerHour', limit: 0 });
    }
    expect(await dynamoRunStore.latestRuns(t.clientId, request, 10)).toEqual([]);
  });
});
