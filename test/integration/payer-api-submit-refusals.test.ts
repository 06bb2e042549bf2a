import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUR_SYSTEMS } from '#lib/payer-api/pas/codes';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { initialAuthorization } from '#lib/requests/request-document';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { call, newTenant, uniqueId } from '#test/support/api';
import {
  createConnection,
  createPasRequest,
  type OwnPayer,
  ownPayerAndTenant,
  type PayerApiTenant,
  pasRequestBody,
  payerClaims,
  submit,
  submitPath,
} from '#test/support/payer-api';
import { PAYER_CONNECTIONS } from '#test/support/payer-connections';
import { locationOf, settledRun } from './rpa-end-to-end-support.ts';

/*
 * What a submission to the payer's API refuses (POST …/Requests/{externalId}/submit, docs/payer-api.md):
 * 422s with a reason clients branch on, a dry run, another tenant's or organization's ids, bad bodies, and
 * a payer that refuses our client assertion. Each refused start sends nothing: no run, and this file's own
 * PAS payer (in this process, reached over HTTP) holds no more claims than before.
 */
let payer: OwnPayer;
const PAYER_ID = 'PTEST-REFUSALS';
let tenant: PayerApiTenant;

beforeAll(async () => {
  ({ payer, tenant } = await ownPayerAndTenant('pas-submit-refusals', PAYER_ID));
});
afterAll(() => payer?.close());

/** Runs `refused` and checks it started no run of the request and the payer got no claim. */
const sendsNothing = async (clientId: string, externalId: string, refused: () => Promise<void>) => {
  const claims = (await payerClaims(payer)).length;
  await refused();
  expect(await dynamoRunStore.latestRuns(clientId, externalId, 5)).toEqual([]);
  expect((await payerClaims(payer)).length).toBe(claims);
};

const expectRefusal = (res: { status: number; body: any; text: string }, reason: string) => {
  expect(res.status, res.text).toBe(422);
  expect(res.body.reason).toBe(reason);
};

describe('a submission that cannot go to the payer’s API (422), nothing sent', () => {
  it('no_payer_api: a request without a PayerId, or whose payer has no endpoint', async () => {
    const { PayerId: _, ...withoutPayer } = pasRequestBody('x', 'SBX-10001', PAYER_ID).patient;
    for (const patient of [withoutPayer, { ...withoutPayer, PayerId: 'PTEST-NO-API' }]) {
      const externalId = await createPasRequest(tenant, 'SBX-10001', { patient });
      await sendsNothing(tenant.clientId, externalId, async () => {
        const res = await submit(tenant, externalId);
        expectRefusal(res, 'no_payer_api');
        expect(res.body.requestExternalId).toBe(externalId);
      });
    }
  });

  it('no_payer_connection, payer_connection_not_active: an organization without a connection, or a disabled one', async () => {
    const other = { ...(await newTenant('pas-submit-unconnected')), payerId: PAYER_ID };
    const externalId = await createPasRequest(other, 'SBX-10001');
    await sendsNothing(other.clientId, externalId, async () => {
      expectRefusal(await submit(other, externalId), 'no_payer_connection');
      const disabled = await createConnection(other, PAYER_ID, `cid-${uniqueId()}`, { status: 'disabled' });
      expectRefusal(await submit(other, externalId), 'no_payer_connection');
      const named = await submit(other, externalId, { payerConnectionExternalId: disabled.externalId });
      expectRefusal(named, 'payer_connection_not_active');
    });
  });

  it('request_not_mappable: each field PAS cannot do without, with its path in the request', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10001', {
      requestTypeCode: undefined,
      procedures: [{ qualifierCode: 'ZZ', code: '72148', quantity: 1 }],
    });
    // A document stored before the schema required a member id: read defensively all the same.
    const older = uniqueId('PAS-OLDER');
    const { externalId: _, ...document } = pasRequestBody(older, 'SBX-10001', PAYER_ID);
    const { memberId: __, ...patient } = document.patient;
    await dynamoRequestStore.putDocument(
      tenant.clientId,
      older,
      { ...document, patient },
      { mustExist: false, initialAuthorization: initialAuthorization(), now: new Date().toISOString() },
    );
    for (const [id, paths] of [
      [externalId, ['/requestTypeCode', '/procedures/0/qualifierCode']],
      [older, ['/patient/memberId']],
    ] as const) {
      await sendsNothing(tenant.clientId, id, async () => {
        const res = await submit(tenant, id);
        expectRefusal(res, 'request_not_mappable');
        expect(res.body.problems.map((problem: { path: string }) => problem.path).sort()).toEqual([...paths].sort());
        for (const problem of res.body.problems) {
          expect(problem).toEqual({
            path: expect.any(String),
            reason: expect.any(String),
            message: expect.any(String),
          });
        }
      });
    }
  });
});

describe('a dry run', () => {
  it('answers the PAS Bundle and its problems (200), and starts and sends nothing', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10001');
    await sendsNothing(tenant.clientId, externalId, async () => {
      const res = await submit(tenant, externalId, { dryRun: true });
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['bundle', 'problems']);
      expect(res.body.problems).toEqual([]);
      const { bundle } = res.body;
      expect(bundle).toMatchObject({ resourceType: 'Bundle', type: 'collection' });
      expect(bundle.identifier.system).toBe(OUR_SYSTEMS.submission);
      expect(bundle.entry[0].resource).toMatchObject({ resourceType: 'Claim', use: 'preauthorization' });
      expect(bundle.entry[0].resource.item).toHaveLength(2);
    });
    const unmappable = await createPasRequest(tenant, 'SBX-10001', {
      procedures: [{ qualifierCode: 'ZZ', code: '1' }],
    });
    await sendsNothing(tenant.clientId, unmappable, async () => {
      const res = await submit(tenant, unmappable, { dryRun: true });
      expect(res.status).toBe(200);
      expect(res.body.bundle.resourceType).toBe('Bundle');
      expect(res.body.problems.map((problem: { path: string }) => problem.path)).toContain(
        '/procedures/0/qualifierCode',
      );
    });
  });
});

describe('a payer that refuses our client assertion', () => {
  it('ends the run credentials_refused and marks the connection attention; it is not used again', async () => {
    const unregistered = await createConnection(tenant, PAYER_ID, `never-registered-${uniqueId()}`);
    const externalId = await createPasRequest(tenant, 'SBX-10001');
    const claims = (await payerClaims(payer)).length;
    const res = await submit(tenant, externalId, { payerConnectionExternalId: unregistered.externalId });
    expect(res.status, res.text).toBe(202);
    const run = await settledRun(tenant, locationOf(res));
    expect(run).toMatchObject({ status: 'failed', outcome: 'credentials_refused', authorization: null });
    expect((await payerClaims(payer)).length).toBe(claims);

    const marked = await call('GET', `${PAYER_CONNECTIONS}/${unregistered.externalId}`, { apiKey: tenant.apiKey });
    expect(marked.body).toMatchObject({ status: 'attention', statusReason: 'invalid_client' });
    expect(marked.body.version).toBe(unregistered.version + 1);
    const again = await submit(tenant, externalId, { payerConnectionExternalId: unregistered.externalId });
    expectRefusal(again, 'payer_connection_not_active');
    // The organization's registered connection is untouched.
    const own = await call('GET', `${PAYER_CONNECTIONS}/${tenant.connection.externalId}`, { apiKey: tenant.apiKey });
    expect(own.body).toMatchObject({ status: 'active', statusReason: null });
  });
});

describe('another tenant’s ids and bad bodies', () => {
  it('answers 404 for another client’s request or user, and for a user outside an organization-limited key', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10001');
    const other = await newTenant('pas-submit-other');
    const { organizationId: orgB } = await tenant.admin.createOrganization(tenant.clientId, 'Org B');
    const userB = uniqueId('user-b');
    await tenant.admin.createClientUser(tenant.clientId, orgB, userB);
    const { apiKey: orgBKey } = await tenant.admin.createApiKey(tenant.clientId, undefined, { organizationId: orgB });
    await sendsNothing(tenant.clientId, externalId, async () => {
      for (const [apiKey, clientUserId, body] of [
        [other.apiKey, other.clientUserId, {}],
        [other.apiKey, tenant.clientUserId, {}],
        [orgBKey, tenant.clientUserId, {}],
        // Org B's user through org A's connection.
        [tenant.apiKey, userB, { payerConnectionExternalId: tenant.connection.externalId }],
      ] as const) {
        const res = await submit({ apiKey, clientUserId }, externalId, body);
        expect(res.status, res.text).toBe(404);
      }
    });
  });

  it('refuses malformed JSON, wrong types and unknown properties (400), oversize (413), another media type (415)', async () => {
    const externalId = await createPasRequest(tenant, 'SBX-10001');
    const post = (rawBody: string, contentType = 'application/json') =>
      call('POST', submitPath(externalId), {
        apiKey: tenant.apiKey,
        rawBody,
        headers: { 'content-type': contentType },
      });
    await sendsNothing(tenant.clientId, externalId, async () => {
      const malformed = await post('{"clientUserId": "oops');
      expect(malformed.status).toBe(400);
      expect(malformed.text).not.toContain('oops');
      const wrong = await post(
        JSON.stringify({ clientUserId: 7, dryRun: 'yes', payerConnectionExternalId: 'a b', x: 1 }),
      );
      expect(wrong.status).toBe(400);
      expect(wrong.body).toEqual({
        succeeded: false,
        type: 'none',
        errors: [
          "/: AdditionalProperties error. must NOT have additional property 'x'.",
          '/clientUserId: Type error for value "7". Message: must be string.',
          '/payerConnectionExternalId: Pattern error for value "a b". Message: must match pattern "^[A-Za-z0-9][A-Za-z0-9._:@-]*$".',
          '/dryRun: Type error for value "yes". Message: must be boolean.',
        ],
      });
      for (const absent of ['{}', '']) {
        const missing = await post(absent);
        expect(missing.status).toBe(400);
        expect(missing.body.errors).toEqual(["/: Required error. must have required property 'clientUserId'."]);
      }
      const huge = await post(JSON.stringify({ clientUserId: tenant.clientUserId, x: 'x'.repeat(300 * 1024) }));
      expect(huge.status).toBe(413);
      expect(huge.body.limitBytes).toBe(256 * 1024);
      const text = await post('clientUserId', 'text/plain');
      expect(text.status).toBe(415);
      expect(text.body.accepted).toEqual(['application/json']);
    });
  });
});
