import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorization } from '#lib/entities/request';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { setAuthorization } from '#lib/requests/authorization-changes';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { call, newTenant, uniqueId } from '#test/support/api';
import {
  createPasRequest,
  type OwnPayer,
  ownPayerAndTenant,
  type PayerApiTenant,
  payerClaims,
  submit,
} from '#test/support/payer-api';
import { getRequest, locationOf, settledRun } from './rpa-end-to-end-support.ts';

/*
 * Cancelling through the payer's API (POST …/Requests/{externalId}/cancel, docs/payer-api.md, "Cancelling"):
 * the start queues a `submit` run whose submission is the cancel of the latest claim sent, and starts it like a
 * submission; what it refuses sends nothing. The claims are made by this file's own PAS payer (in this process,
 * reached over HTTP with the tenant's real client assertions). What the payer answers a cancel is the
 * SubmitPasClaim task's to send and record, not the start's.
 */
let payer: OwnPayer;
const PAYER_ID = 'PTEST-CANCEL';
let tenant: PayerApiTenant;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-cancel', PAYER_ID));
});
afterAll(() => payer?.close());

const cancelPath = (externalId: string) => `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}/cancel`;

const cancel = (
  who: { apiKey: string; clientUserId: string },
  externalId: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) =>
  call('POST', cancelPath(externalId), {
    apiKey: who.apiKey,
    body: { clientUserId: who.clientUserId, ...body },
    headers,
  });

const runsOf = (externalId: string) => dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);

/** A pended request (the payer's SBX-10003) submitted and its run ended: its id and the claim identifier sent. */
const submittedPended = async () => {
  const externalId = await createPasRequest(tenant, 'SBX-10003');
  const res = await submit(tenant, externalId);
  expect(res.status, res.text).toBe(202);
  const run = await settledRun(tenant, locationOf(res));
  expect(run).toMatchObject({ status: 'succeeded', outcome: 'submitted' });
  const [record] = await runsOf(externalId);
  return { externalId, claimIdentifier: record!.submission!.bundleIdentifier };
};

/**
 * A `submit` run of the request as the SubmitPasClaim task leaves one (sent now, unless `submission` says
 * otherwise), stored as it is: what the payer answered it is `change`'s. No execution runs it.
 */
const storedSubmit = async (
  externalId: string,
  submission: Partial<NonNullable<RpaRunRecord['submission']>>,
  change: Partial<RpaRunRecord>,
) => {
  const at = new Date().toISOString();
  const run: RpaRunRecord = {
    clientId: tenant.clientId,
    externalId,
    runId: uuidv7(),
    kind: 'submit',
    clientUserId: tenant.clientUserId,
    organizationId: tenant.organizationId,
    channel: 'pas',
    payerConnectionId: tenant.connection.externalId,
    submission: { bundleIdentifier: randomUUID(), sentAt: at, ...submission },
    status: 'succeeded',
    steps: [{ at, step: 'queued' }],
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...change,
  };
  await dynamoRunStore.createRun(run);
  return run;
};

/** Checks that `refused` started no run of the request and made the payer no claim. */
const sendsNothing = async (externalId: string, refused: () => Promise<void>) => {
  const runs = (await runsOf(externalId)).map((run) => run.runId);
  const claims = (await payerClaims(payer)).length;
  await refused();
  expect((await runsOf(externalId)).map((run) => run.runId)).toEqual(runs);
  expect((await payerClaims(payer)).length).toBe(claims);
};

const expectRefusal = (res: { status: number; body: any; text: string }, status: number, reason: string) => {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ reason, requestExternalId: expect.any(String) });
};

/** The request's authorization as a status read through `channel` records it (the automation's write). */
const readThrough = async (externalId: string, change: Partial<Authorization>) => {
  const { authorization } = (await dynamoRequestStore.get(tenant.clientId, externalId))!;
  const at = new Date().toISOString();
  const next = { ...authorization, lastCheckedAt: at, ...change };
  expect(
    await setAuthorization(
      dynamoRequestStore,
      { clientId: tenant.clientId, externalId },
      next,
      { kind: 'run', runId: uuidv7() },
      at,
    ),
  ).toBe(true);
};

describe('a cancel of a submitted request', () => {
  it('answers 202 and the run’s Location: a submit run whose submission cancels the claim sent', async () => {
    const { externalId, claimIdentifier } = await submittedPended();
    const res = await cancel(tenant, externalId);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ runId: expect.any(String), status: 'queued' });
    expect(locationOf(res)).toBe(`/api/external/v1/ServiceReviews/requests/${externalId}/rpa/runs/${res.body.runId}`);
    const record = (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: res.body.runId }))!;
    expect(record).toMatchObject({
      kind: 'submit',
      channel: 'pas',
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      payerConnectionId: tenant.connection.externalId,
      executionArn: expect.any(String),
      submission: { action: 'cancel', relatedClaimIdentifier: claimIdentifier },
    });
    // A claim identifier of its own: the cancel is a submission of its own, naming the claim it cancels.
    expect(record.submission!.bundleIdentifier).not.toBe(claimIdentifier);
    await settledRun(tenant, locationOf(res));
  });

  it('is one cancel for two calls with one Idempotency-Key; another body with the key is refused (422)', async () => {
    const { externalId } = await submittedPended();
    const key = uniqueId('idem');
    const first = await cancel(tenant, externalId, {}, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(202);
    const replay = await cancel(tenant, externalId, {}, { 'Idempotency-Key': key });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.runId).toBe(first.body.runId);
    expect(locationOf(replay)).toBe(locationOf(first));
    const other = await cancel(
      tenant,
      externalId,
      { payerConnectionExternalId: tenant.connection.externalId },
      { 'Idempotency-Key': key },
    );
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/already used for a different request/);
    await settledRun(tenant, locationOf(first));
    const cancels = (await runsOf(externalId)).filter((run) => run.submission?.action === 'cancel');
    expect(cancels.map((run) => run.runId)).toEqual([first.body.runId]);
  });

  it('cancels the latest claim the payer took: not an update it refused, nor an ended cancel', async () => {
    const { externalId, claimIdentifier } = await submittedPended();
    const refused = { status: 'failed', outcome: 'payer_refused' } as const;
    const related = { relatedClaimIdentifier: claimIdentifier };
    await storedSubmit(externalId, { action: 'update', ...related }, refused);
    await storedSubmit(externalId, { action: 'cancel', ...related }, refused);
    const res = await cancel(tenant, externalId);
    expect(res.status, res.text).toBe(202);
    const record = (await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: res.body.runId }))!;
    expect(record.submission).toMatchObject({ action: 'cancel', relatedClaimIdentifier: claimIdentifier });
    await settledRun(tenant, locationOf(res));
  });

  it('is refused while another cancel of the request is under way (409 cancel_in_progress)', async () => {
    const { externalId, claimIdentifier } = await submittedPended();
    // A cancel queued and not yet sent (its execution not started: nothing runs it in this test).
    await storedSubmit(
      externalId,
      { action: 'cancel', relatedClaimIdentifier: claimIdentifier, sentAt: null },
      { status: 'queued' },
    );
    await sendsNothing(externalId, async () =>
      expectRefusal(await cancel(tenant, externalId), 409, 'cancel_in_progress'),
    );
  });
});

describe('a cancel refused before anything is sent', () => {
  it('422 not_supported_on_portal, for a cancel and for a submit, when the portal reads the authorization', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10003');
    await readThrough(externalId, { status: 'pending', channel: 'portal' });
    await sendsNothing(externalId, async () => {
      expectRefusal(await cancel(tenant, externalId), 422, 'not_supported_on_portal');
      expectRefusal(await submit(tenant, externalId), 422, 'not_supported_on_portal');
      expectRefusal(await submit(tenant, externalId, { dryRun: true }), 422, 'not_supported_on_portal');
    });
  });

  it('422 not_submitted: a request never sent to the payer’s API, or whose only claim the payer refused', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10003');
    await sendsNothing(externalId, async () => {
      const res = await cancel(tenant, externalId);
      expectRefusal(res, 422, 'not_submitted');
      expect(res.body.requestExternalId).toBe(externalId);
    });
    await storedSubmit(externalId, {}, { status: 'failed', outcome: 'payer_refused' });
    await sendsNothing(externalId, async () => expectRefusal(await cancel(tenant, externalId), 422, 'not_submitted'));
  });

  it('409 already_cancelled: the payer confirmed a cancel already', async () => {
    const { externalId } = await submittedPended();
    await readThrough(externalId, { status: 'cancelled', channel: 'pas' });
    expect((await getRequest(tenant, externalId)).authorization.status).toBe('cancelled');
    await sendsNothing(externalId, async () =>
      expectRefusal(await cancel(tenant, externalId), 409, 'already_cancelled'),
    );
  });

  it('404 for another client’s request or user, and for a connection of another organization', async () => {
    const { externalId } = await submittedPended();
    const other = await newTenant('pas-cancel-other');
    const { organizationId: orgB } = await tenant.admin.createOrganization(tenant.clientId, 'Org B');
    const userB = uniqueId('user-b');
    await tenant.admin.createClientUser(tenant.clientId, orgB, userB);
    await sendsNothing(externalId, async () => {
      for (const [apiKey, clientUserId, body] of [
        [other.apiKey, other.clientUserId, {}],
        [other.apiKey, tenant.clientUserId, {}],
        [tenant.apiKey, userB, { payerConnectionExternalId: tenant.connection.externalId }],
        [tenant.apiKey, tenant.clientUserId, { payerConnectionExternalId: 'pconn-nobody-has' }],
      ] as const) {
        const res = await cancel({ apiKey, clientUserId }, externalId, body);
        expect(res.status, res.text).toBe(404);
      }
    });
  });

  it('400 for a missing, malformed or unknown body member, 415 for another media type', async () => {
    const { externalId } = await submittedPended();
    const post = (rawBody: string | undefined, contentType = 'application/json') =>
      call('POST', cancelPath(externalId), {
        apiKey: tenant.apiKey,
        ...(rawBody === undefined ? {} : { rawBody }),
        headers: { 'content-type': contentType },
      });
    await sendsNothing(externalId, async () => {
      expect((await post(undefined)).status).toBe(400);
      expect((await post('{"clientUserId": "oops')).status).toBe(400);
      const wrong = await post(JSON.stringify({ clientUserId: 7, payerConnectionExternalId: 'a b', dryRun: true }));
      expect(wrong.status).toBe(400);
      expect(wrong.body.succeeded).toBe(false);
      expect(wrong.body.errors).toHaveLength(3);
      expect((await post(JSON.stringify({}))).status).toBe(400);
      expect((await post(JSON.stringify({ clientUserId: tenant.clientUserId }), 'text/plain')).status).toBe(415);
    });
  });
});
