import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { describe, expect, inject, it } from 'vitest';
import { SANDBOX_DEMO_MEMBERS, SANDBOX_MEMBERS, SANDBOX_PAYER_ID, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { call, uniqueId } from '#test/support/api';
import {
  allExecutions,
  automationTenant,
  baseUrl,
  createPortalAccount,
  createRequest,
  expectNoSecretsAnywhere,
  type FinishedRun,
  getRequest,
  locationOf,
  openSession,
  portalStatusLookup,
  scraperAccess,
  settledBatch,
  settledRun,
  startBatch,
  startViewOnPage,
  type Tenant,
} from './rpa-end-to-end-support.ts';
import { batchPath, rpaOf, serviceReviews } from './rpa-support.ts';

/*
 * The automation end to end, as a client sees it: HTTP with an API key through the local gateway, executions
 * through the real @aws-sdk/client-sfn to the local Step Functions, and the worker driving the sandbox payer
 * portal in real headless Chromium (test/support/global-setup.ts starts them all). Every test has its own
 * tenant, portal accounts and requests; the portal's users and members are its seed's
 * (local/sandbox-portal/seed.ts). Refused logins and the portal that never answers are in
 * rpa-end-to-end-outcomes.test.ts. Each execution launches a browser: the runs here are few.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const stackEnv = inject('stackEnv');
const executionArnOf = (machineArn: string, name: string) =>
  `${machineArn.replace(':stateMachine:', ':execution:')}:${name}`;

const [plainUser] = SANDBOX_USERS;
const memberOf = (memberId: string) => SANDBOX_MEMBERS.find((member) => member.memberId === memberId)!;
/** A payer no portal account of these tenants serves: its runs end `no_portal_account` without a browser. */
const UNSERVED_PAYER = 'E2E-UNSERVED';

/** What every test left behind, for the secrets scan at the end. */
const finished: FinishedRun[] = [];
const executionArns: string[] = [];

const remember = (tenant: Tenant, runs: Array<{ requestExternalId: string; runId: string }>, executionArn: string) => {
  for (const run of runs) finished.push({ tenant, externalId: run.requestExternalId, runId: run.runId });
  executionArns.push(executionArn);
};

describe('view-on-page, end to end', () => {
  it('fills the portal form with the request, stops before submitting, and shows it in the scraper session', async () => {
    const tenant = await automationTenant('e2e-view');
    const member = memberOf('SBX-10002');
    const externalId = uniqueId('E2E-VIEW');
    await createRequest(tenant, externalId, member, SANDBOX_PAYER_ID);
    const { accessToken, scraperUri } = await scraperAccess(tenant, externalId);
    expect(scraperUri).toBe(`${baseUrl}${serviceReviews}/${externalId}/rpa/session`);

    const started = await startViewOnPage(tenant, externalId);
    expect(started.status, started.text).toBe(202);
    const { runId } = started.body;
    expect(runId).toMatch(UUID);
    const executionArn = executionArnOf(stackEnv.VIEW_ON_PAGE_STATE_MACHINE_ARN!, runId);
    expect(started.body).toEqual({ runId, executionId: executionArn, status: 'queued' });
    expect(locationOf(started)).toBe(`${rpaOf(externalId)}/runs/${runId}`);
    remember(tenant, [{ requestExternalId: externalId, runId }], executionArn);

    // While the run is queued or running, a browser's page reloads itself (with its session cookie).
    const whileActive = await openSession(scraperUri, accessToken, { via: 'query', accept: 'text/html' });
    expect(whileActive.status).toBe(200);
    expect(whileActive.text).toContain('<meta http-equiv="refresh" content="5">');

    const run = await settledRun(tenant, locationOf(started));
    expect(run).toMatchObject({
      runId,
      requestExternalId: externalId,
      kind: 'view-on-page',
      batchId: null,
      clientUserId: tenant.clientUserId,
      portalAccountId: 'sandbox-front-desk',
      portalId: 'sandbox',
      status: 'succeeded',
      outcome: 'form_filled',
      authorization: null,
      executionId: executionArn,
    });
    // The request's non-blank values as typed, each read back the same from the portal's page.
    const typed = {
      reference: externalId,
      'patient.memberId': 'SBX-10002',
      'patient.firstName': 'Jordan',
      'patient.lastName': 'Sandbox',
      'patient.birthDate': '1988-09-30',
      'patient.payerId': 'SANDBOX',
      'requestingProvider.npi': '1234567893',
      'requestingProvider.firstName': 'Jane',
      'requestingProvider.lastName': 'Doe',
      'requestingProvider.roleCode': '1P',
      serviceTypeCode: '2',
      placeOfServiceCode: '22',
      admissionTypeCode: '2',
      fromDate: '2026-03-02',
      toDate: '2026-03-06',
      'renderingProviders.0.npi': '1245319599',
      'renderingProviders.0.firstName': 'Sam',
      'renderingProviders.0.lastName': 'Rivera',
      'renderingProviders.0.roleCode': 'SJ',
      'renderingProviders.1.organizationName': 'Example Imaging & Co',
      'renderingProviders.1.roleCode': 'FA',
      'diagnoses.0.qualifierCode': 'ABK',
      'diagnoses.0.code': 'M54.5',
      'diagnoses.1.qualifierCode': 'ABF',
      'diagnoses.1.code': 'M51.26',
      'procedures.0.qualifierCode': 'HC',
      'procedures.0.code': '72148',
      'procedures.0.quantity': '1',
      'procedures.1.qualifierCode': 'HC',
      'procedures.1.code': '72149',
      'procedures.1.quantity': '2',
    };
    expect(run.enteredValues).toEqual(
      Object.fromEntries(Object.entries(typed).map(([field, value]) => [field, { value, readBack: true }])),
    );
    expect(run.steps.map((step: { step: string }) => step.step)).toEqual([
      'queued',
      'portal account selected',
      'started',
      'credentials issued',
      'logged in',
      'form filled',
      'form filled; stopped before submitting',
    ]);
    expect(run.steps[3].detail).toBe('attempt 1');
    expect(run.steps[5].detail).toBe(`${Object.keys(typed).length} fields`);
    expect(run.screenshots).toEqual([
      { n: 1, label: 'the filled form, before submitting', capturedAt: expect.any(String) },
    ]);

    // The scraper session: JSON with the token in a header, the same run, a screenshot URL that serves the PNG.
    const asJson = await openSession(scraperUri, accessToken);
    expect(asJson.status).toBe(200);
    expect(asJson.headers.get('content-type')).toMatch(/^application\/json/);
    const session = asJson.json();
    expect(session).toMatchObject({
      requestExternalId: externalId,
      clientUserId: tenant.clientUserId,
      authorization: { status: 'not_submitted', number: null, decisionDate: null, lastCheckedAt: null },
    });
    expect(session.runs).toHaveLength(1);
    const { screenshots, ...shown } = session.runs[0];
    const { screenshots: _, ...read } = run;
    expect(shown).toEqual(read);
    expect(screenshots).toEqual([
      {
        n: 1,
        label: 'the filled form, before submitting',
        capturedAt: run.screenshots[0].capturedAt,
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//),
        urlExpiresAt: expect.any(String),
      },
    ]);
    const image = await fetch(screenshots[0].url);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await image.arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.length).toBeGreaterThan(5000);

    // As HTML from a ?token= link, as a browser opens it: the run, its values escaped, no reload once it has ended.
    const asHtml = await openSession(scraperUri, accessToken, { via: 'query', accept: 'text/html' });
    expect(asHtml.status).toBe(200);
    expect(asHtml.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(asHtml.text).toContain(runId);
    expect(asHtml.text).toContain('form_filled');
    expect(asHtml.text).toContain('SBX-10002');
    expect(asHtml.text).toContain('Example Imaging &amp; Co');
    expect(asHtml.text).not.toContain('http-equiv="refresh"');

    // The portal never got the form: a submission would have created a pended authorization for this
    // member and reference, which its own status lookup would find.
    expect(await portalStatusLookup(plainUser, { memberId: 'SBX-10002', reference: externalId })).toBe('not_found');
  });
});

describe('check-auth-status batches, end to end', () => {
  it('reads approved, denied, pended and unknown statuses on the portal and updates each request', async () => {
    const tenant = await automationTenant('e2e-batch');
    const ids = Object.keys(SANDBOX_DEMO_MEMBERS) as Array<keyof typeof SANDBOX_DEMO_MEMBERS>;
    for (const id of ids) await createRequest(tenant, id, memberOf(SANDBOX_DEMO_MEMBERS[id]), SANDBOX_PAYER_ID);
    const before = new Date().toISOString();

    const started = await startBatch(tenant, ids);
    expect(started.status, started.text).toBe(202);
    const { batchId } = started.body;
    expect(batchId).toMatch(UUID);
    const executionArn = executionArnOf(stackEnv.CHECK_AUTH_STATUS_STATE_MACHINE_ARN!, batchId);
    expect(started.body).toEqual({ batchId, executionId: executionArn, total: 4 });
    expect(locationOf(started)).toBe(`${batchPath}/${batchId}`);

    const progress = await settledBatch(tenant, locationOf(started));
    remember(tenant, progress.items, executionArn);
    expect(progress).toMatchObject({
      batchId,
      status: 'done',
      total: 4,
      done: 4,
      failed: 0,
      executionId: executionArn,
      finishedAt: expect.any(String),
    });
    const ran = (status: object | null, outcome = 'status_read') => ({
      runId: expect.stringMatching(UUID),
      status: 'succeeded',
      outcome,
      authorization: status,
    });
    expect(progress.items).toEqual([
      {
        requestExternalId: 'DEMO-APPROVED',
        ...ran({ status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' }),
      },
      { requestExternalId: 'DEMO-DENIED', ...ran({ status: 'denied', number: null, decisionDate: '2026-02-21' }) },
      { requestExternalId: 'DEMO-PENDED', ...ran({ status: 'pended', number: null, decisionDate: null }) },
      {
        requestExternalId: 'DEMO-UNKNOWN',
        ...ran({ status: 'not_found', number: null, decisionDate: null }, 'not_found_on_portal'),
      },
    ]);

    const expected = {
      'DEMO-APPROVED': { status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' },
      'DEMO-DENIED': { status: 'denied', number: null, decisionDate: '2026-02-21' },
      'DEMO-PENDED': { status: 'pending', number: null, decisionDate: null },
      'DEMO-UNKNOWN': { status: 'not_found', number: null, decisionDate: null },
    };
    for (const [i, id] of ids.entries()) {
      const { authorization } = await getRequest(tenant, id);
      // A portal shows the decision, not items or reasons (those come through the payer's API).
      const portalRead = { channel: 'portal', items: [], reasons: [], decisionDueAt: null, informationRequested: null };
      expect(authorization, id).toEqual({ ...expected[id], ...portalRead, lastCheckedAt: expect.any(String) });
      expect(authorization.lastCheckedAt >= before && authorization.lastCheckedAt <= progress.finishedAt).toBe(true);

      const run = await call('GET', `${rpaOf(id)}/runs/${progress.items[i].runId}`, { apiKey: tenant.apiKey });
      expect(run.body).toMatchObject({
        kind: 'check-auth-status',
        batchId,
        portalAccountId: 'sandbox-front-desk',
        executionId: executionArn,
        screenshots: [{ n: 1, label: 'the authorization status' }],
      });
    }
  });

  it("finishes a batch whose account group fails: that group's items have its outcome, the others are read", async () => {
    const tenant = await automationTenant('e2e-batch-failing');
    // The unserved payer's own account, whose login the portal refuses (an unknown user: nothing locks).
    const { externalId: refused } = await createPortalAccount(tenant, {
      externalId: 'refused-front-desk',
      payerIds: [UNSERVED_PAYER],
      username: `nobody-${randomUUID()}`,
      password: 'not-the-password',
    });
    await createRequest(tenant, 'DEMO-APPROVED', memberOf('SBX-10001'), SANDBOX_PAYER_ID);
    const unserved = await createRequest(tenant, uniqueId('E2E-UNSERVED'), memberOf('SBX-10001'), UNSERVED_PAYER);

    const started = await startBatch(tenant, [unserved, 'DEMO-APPROVED']);
    expect(started.status, started.text).toBe(202);
    const progress = await settledBatch(tenant, locationOf(started));
    remember(tenant, progress.items, started.body.executionId);
    expect(progress).toMatchObject({ status: 'done', total: 2, done: 2, failed: 1 });
    expect(progress.items).toEqual([
      {
        requestExternalId: unserved,
        runId: expect.stringMatching(UUID),
        status: 'failed',
        outcome: 'wrong_password',
        authorization: null,
      },
      {
        requestExternalId: 'DEMO-APPROVED',
        runId: expect.stringMatching(UUID),
        status: 'succeeded',
        outcome: 'status_read',
        authorization: { status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' },
      },
    ]);
    const failed = await call('GET', `${rpaOf(unserved)}/runs/${progress.items[0].runId}`, { apiKey: tenant.apiKey });
    expect(failed.body).toMatchObject({ portalAccountId: refused, screenshots: [], enteredValues: {} });
    expect(failed.body.steps.at(-1)).toMatchObject({ detail: 'wrong_password' });
    expect((await getRequest(tenant, unserved)).authorization).toEqual({
      status: 'not_submitted',
      number: null,
      decisionDate: null,
      lastCheckedAt: null,
      channel: null,
      items: [],
      reasons: [],
      decisionDueAt: null,
      informationRequested: null,
    });
    expect((await getRequest(tenant, 'DEMO-APPROVED')).authorization.status).toBe('approved');
  });
});

describe('retries of the starts (Idempotency-Key), end to end', () => {
  it('answers a retry with the first answer and starts nothing more; another body with the key is 422', async () => {
    const tenant = await automationTenant('e2e-idempotent');
    const viewed = await createRequest(tenant, uniqueId('E2E-IDEM-VIEW'), memberOf('SBX-10001'), UNSERVED_PAYER);
    const checked = await createRequest(tenant, uniqueId('E2E-IDEM-CHECK'), memberOf('SBX-10001'), UNSERVED_PAYER);
    const { clientUserId: anotherUser } = await tenant.admin.createClientUser(
      tenant.clientId,
      tenant.organizationId,
      `another-${randomUUID().slice(0, 8)}`,
    );

    const viewKey = { 'idempotency-key': `view-${randomUUID()}` };
    const first = await startViewOnPage(tenant, viewed, viewKey);
    expect(first.status, first.text).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await startViewOnPage(tenant, viewed, viewKey);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(locationOf(again)).toBe(locationOf(first));
    const otherBody = await call('POST', `${rpaOf(viewed)}/view-on-page`, {
      apiKey: tenant.apiKey,
      body: { clientUserId: anotherUser },
      headers: viewKey,
    });
    expect(otherBody.status, otherBody.text).toBe(422);

    const batchKey = { 'idempotency-key': `batch-${randomUUID()}` };
    const batch = await startBatch(tenant, [checked], batchKey);
    expect(batch.status, batch.text).toBe(202);
    const batchAgain = await startBatch(tenant, [checked], batchKey);
    expect(batchAgain.status).toBe(202);
    expect(batchAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(batchAgain.body).toEqual(batch.body);
    expect(locationOf(batchAgain)).toBe(locationOf(batch));
    expect((await startBatch(tenant, [checked, viewed], batchKey)).status).toBe(422);

    const run = await settledRun(tenant, locationOf(first));
    expect(run).toMatchObject({ runId: first.body.runId, status: 'succeeded', outcome: 'form_filled' });
    const progress = await settledBatch(tenant, locationOf(batch));
    expect(progress.items).toMatchObject([{ requestExternalId: checked, outcome: 'not_found_on_portal' }]);
    remember(tenant, [{ requestExternalId: viewed, runId: first.body.runId }], first.body.executionId);
    remember(tenant, progress.items, batch.body.executionId);

    // One run per request, and one execution each.
    for (const id of [viewed, checked]) {
      const { accessToken, scraperUri } = await scraperAccess(tenant, id);
      expect((await openSession(scraperUri, accessToken)).json().runs, id).toHaveLength(1);
    }
    const inputs = (await allExecutions()).map((execution) => execution.description.input ?? '');
    expect(inputs.filter((input) => input.includes(`"requestExternalId":"${viewed}"`))).toEqual([
      JSON.stringify({
        clientId: tenant.clientId,
        requestExternalId: viewed,
        runId: first.body.runId,
        portalAccountId: 'sandbox-front-desk',
      }),
    ]);
    expect(inputs.filter((input) => input.includes(checked))).toHaveLength(1);
  });
});

describe('the scraper token’s scope, end to end', () => {
  const tokenKey = () =>
    Buffer.from(readFileSync(join(stackEnv.LOCAL_STATE_DIR!, 'rpa-token.key'), 'utf8').trim(), 'base64');

  /** A token signed with the stack's own key, as the API would sign it, for any times. */
  const signToken = (
    claims: { cid: string; akid: string; sub: string; req: string },
    issuedAt: number,
    expiresAt: number,
  ) => {
    const key = tokenKey();
    return new SignJWT({ cid: claims.cid, akid: claims.akid, req: claims.req })
      .setProtectedHeader({
        alg: 'HS256',
        typ: 'JWT',
        kid: createHash('sha256').update(key).digest('base64url').slice(0, 12),
      })
      .setIssuer('service-review-api')
      .setAudience('scraper-session')
      .setSubject(claims.sub)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(key);
  };

  it('opens one request of one client, for 15 minutes; the refusals say nothing of the request', async () => {
    const [tenant, other] = await Promise.all([automationTenant('e2e-scope'), automationTenant('e2e-scope-other')]);
    const shared = uniqueId('E2E-SCOPE');
    const [a, b] = [
      await createRequest(tenant, shared, memberOf('SBX-10001'), UNSERVED_PAYER),
      await createRequest(tenant, uniqueId('E2E-SCOPE-B'), memberOf('SBX-10002'), UNSERVED_PAYER),
    ];
    // The other client has a request of the same id, and no run on it.
    await createRequest(other, shared, memberOf('SBX-10003'), UNSERVED_PAYER);
    const started = await startViewOnPage(tenant, a);
    expect(started.status, started.text).toBe(202);
    const run = await settledRun(tenant, locationOf(started));
    remember(tenant, [{ requestExternalId: a, runId: run.runId }], started.body.executionId);

    const tokenA = await scraperAccess(tenant, a);
    const tokenB = await scraperAccess(tenant, b);
    const own = await openSession(tokenA.scraperUri, tokenA.accessToken);
    expect(own.status).toBe(200);
    expect(own.json().runs.map((shown: { runId: string }) => shown.runId)).toEqual([run.runId]);

    /** Problem details, holding nothing of the run or the request but the ids the caller named. */
    const refused = (
      res: { status: number; headers: Headers; text: string },
      status: number,
      label: string,
      { namedRun = false } = {},
    ) => {
      expect(res.status, label).toBe(status);
      expect(res.headers.get('content-type'), label).toMatch(/^application\/problem\+json/);
      for (const shown of ['SBX-10001', 'no_portal_account', 'steps', tenant.clientUserId]) {
        expect(res.text, label).not.toContain(shown);
      }
      if (!namedRun) expect(res.text, label).not.toContain(run.runId);
    };
    // A token for B does not open A, by header or in the URL.
    refused(await openSession(tokenA.scraperUri, tokenB.accessToken), 401, 'B’s token on A');
    refused(await openSession(tokenA.scraperUri, tokenB.accessToken, { via: 'query' }), 401, 'B’s token on A, ?token=');

    // The other client's token for its own request of the same id opens that request only.
    const otherToken = await scraperAccess(other, shared);
    expect(otherToken.scraperUri).toBe(tokenA.scraperUri);
    const theirs = await openSession(otherToken.scraperUri, otherToken.accessToken);
    expect(theirs.status).toBe(200);
    expect(theirs.json()).toMatchObject({ requestExternalId: shared, clientUserId: other.clientUserId, runs: [] });
    expect(theirs.text).not.toContain(run.runId);
    expect(theirs.text).not.toContain('SBX-10001');
    refused(await openSession(tokenB.scraperUri, otherToken.accessToken), 401, 'the other client’s token on B');
    // The other client cannot get a token for, start, or read this client's requests, runs and batches.
    for (const res of [
      await call('POST', rpaOf(b), { apiKey: other.apiKey, body: { clientUserId: other.clientUserId } }),
      await call('POST', `${rpaOf(b)}/view-on-page`, {
        apiKey: other.apiKey,
        body: { clientUserId: other.clientUserId },
      }),
      await call('POST', batchPath, {
        apiKey: other.apiKey,
        body: { clientUserId: other.clientUserId, requestExternalIds: [b] },
      }),
    ]) {
      refused(res, 404, `the other client: ${res.body.detail}`);
    }
    const othersRead = await call('GET', `${rpaOf(a)}/runs/${run.runId}`, { apiKey: other.apiKey });
    refused(othersRead, 404, 'the other client reading the run', { namedRun: true });
    expect(othersRead.body.detail).toBe(`Run ${run.runId} was not found.`);
    // Nor can this client act for the other client's user.
    for (const res of [
      await call('POST', rpaOf(a), { apiKey: tenant.apiKey, body: { clientUserId: other.clientUserId } }),
      await call('POST', `${rpaOf(a)}/view-on-page`, {
        apiKey: tenant.apiKey,
        body: { clientUserId: other.clientUserId },
      }),
      await call('POST', batchPath, {
        apiKey: tenant.apiKey,
        body: { clientUserId: other.clientUserId, requestExternalIds: [a] },
      }),
    ]) {
      refused(res, 404, 'another client’s user');
      expect(res.body.detail).toBe(`Client user ${other.clientUserId} was not found.`);
    }

    // Signed with the stack's key: valid now, it opens A; expired, it is 401 like any bad token.
    const now = Math.floor(Date.now() / 1000);
    const claims = { cid: tenant.clientId, akid: tenant.keyId, sub: tenant.clientUserId, req: a };
    expect((await openSession(tokenA.scraperUri, await signToken(claims, now, now + 900))).status).toBe(200);
    const expired = await openSession(tokenA.scraperUri, await signToken(claims, now - 1200, now - 300));
    refused(expired, 401, 'expired');
    expect(expired.headers.get('www-authenticate')).toBe('Bearer realm="scraper-session", error="invalid_token"');

    // …/rpa/url is gone; …/rpa wants its body.
    for (const method of ['GET', 'POST']) {
      const res = await call(method, `${rpaOf(a)}/url`, {
        apiKey: tenant.apiKey,
        ...(method === 'POST' ? { body: { clientUserId: tenant.clientUserId } } : {}),
      });
      refused(res, 404, `${method} …/rpa/url`);
    }
    const required = {
      succeeded: false,
      errors: ["/: Required error. must have required property 'clientUserId'."],
      type: 'none',
    };
    for (const [label, options, expected] of [
      ['no body', {}, required],
      ['{}', { body: {} }, required],
      [
        'a number',
        { body: { clientUserId: 7 } },
        {
          succeeded: false,
          errors: ['/clientUserId: Type error for value "7". Message: must be string.'],
          type: 'none',
        },
      ],
    ] as const) {
      const res = await call('POST', rpaOf(a), { apiKey: tenant.apiKey, ...options });
      expect(res.status, label).toBe(400);
      expect(res.body, label).toEqual(expected);
    }
  });
});

describe('secrets, after the runs above', () => {
  it('leaves no form of the portal password in executions, items, runs, sessions, screenshots or logs', async () => {
    expect(finished.length).toBeGreaterThanOrEqual(8);
    await expectNoSecretsAnywhere({ passwords: [plainUser.password], totpSecrets: [] }, finished, executionArns);
  });
});
