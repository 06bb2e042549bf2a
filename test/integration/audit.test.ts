import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { AUDIT_FILE_NAME } from '#lib/audit/audit-file';
import type { AuditLine } from '#lib/audit/audit-record';
import { fillPath } from '#lib/http/resource-url';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { routeAudit } from '#lib/routes/audit-spec';
import { type Route, routes } from '#lib/routes/route-table';
import { type ApiResponse, baseUrl, call, expectConforming, newTenant, uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';
import { connectionBody, PAYER_CONNECTIONS, payerWithApi } from '#test/support/payer-connections';
import { multipart, sample } from './attachments-support.ts';
import { storedRun } from './rpa-support.ts';
import { storedDelivery } from './webhook-receiver-support.ts';

/**
 * The audit trail (lib/http/audit.ts), read from the local stack's JSON-lines file: one request to
 * every audited route of the table, each leaving its intent (written before the handler ran) and
 * exactly one outcome, with ids and status, none of the PHI or credentials the request carried, and
 * the very lines the stack wrote on stdout (what the deployed trail ships).
 */
const auditFile = join(inject('stackEnv').LOCAL_STATE_DIR!, AUDIT_FILE_NAME);

const readLines = async (): Promise<AuditLine[]> => {
  const text = await readFile(auditFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditLine);
};

/** The lines of one request, in the order written: API Gateway's id, as the client sees it in x-amzn-RequestId. */
const linesOf = async (res: ApiResponse) => {
  const requestId = res.headers.get('x-amzn-requestid');
  expect(requestId).toBeTruthy();
  return (await readLines()).filter((line) => line.requestId === requestId);
};

const newWebhook = async () => {
  const res = await api('POST', `${v11}/Webhooks`, {
    body: { url: 'https://hooks.example.com/audit', events: ['authorization.status_changed'] },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
};

/** The one outcome of a request (and, if its handler ran, the intent before it). */
const theOutcomeOf = async (res: ApiResponse) => {
  const lines = await linesOf(res);
  const outcomes = lines.filter((line) => line.phase === 'outcome');
  expect(outcomes, JSON.stringify(lines)).toHaveLength(1);
  expect(lines.at(-1)).toBe(outcomes[0]);
  return outcomes[0]!;
};

/** A request whose handler ran: exactly its intent, then its outcome. */
const theIntentAndOutcomeOf = async (res: ApiResponse) => {
  const lines = await linesOf(res);
  expect(
    lines.map((line) => line.phase),
    JSON.stringify(lines),
  ).toEqual(['intent', 'outcome']);
  return lines as [AuditLine, AuditLine];
};

/** Powertools' fields of an audit line and its marker. */
const lineFields = (phase: 'intent' | 'outcome') => ({
  level: 'info',
  message: phase === 'intent' ? 'Audit intent' : 'Audit outcome',
  timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  service: 'service-review',
  audit: 'v1',
  phase,
  time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
});

// PHI and secrets that no event may contain: distinctive, so a substring search cannot hit an id.
const PHI = {
  firstName: 'Zelda',
  lastName: 'Quixotic',
  memberId: 'MBR-ZQ-4242',
  birthDate: '1961-07-14',
  fileName: 'Quixotic-knee-MRI.pdf',
  description: 'left knee, Quixotic',
  username: 'zq.portal@clinic.example',
  password: 'Sup3r-Secret-Pa55!',
  totpSecret: 'JBSWY3DPEHPK3PXP',
  displayName: 'Quixotic family practice',
};
const expectNoPhi = (event: AuditLine) => {
  const line = JSON.stringify(event);
  for (const value of Object.values(PHI)) expect(line).not.toContain(value);
};

const phiRequest = (externalId: string) => {
  const body = validRequest(externalId);
  return {
    ...body,
    patient: {
      ...body.patient,
      firstName: PHI.firstName,
      lastName: PHI.lastName,
      memberId: PHI.memberId,
      birthDate: PHI.birthDate,
    },
  };
};

const v1 = '/api/external/v1';
const v11 = '/api/external/v1.1';

type Tenant = Awaited<ReturnType<typeof newTenant>>;
let tenant: Tenant;
let other: Tenant;

const api = (method: string, path: string, options: Parameters<typeof call>[2] = {}) =>
  call(method, path, { apiKey: tenant.apiKey, ...options });

/** A GET whose redirect is not followed (the download's 303 to a presigned URL). */
const getUnfollowed = async (path: string): Promise<ApiResponse> => {
  const response = await fetch(`${baseUrl}${path}`, { headers: { 'x-api-key': tenant.apiKey }, redirect: 'manual' });
  const text = await response.text();
  await expectConforming('GET', path, response, text);
  return { status: response.status, headers: response.headers, body: text, text };
};

const newRequest = async () => {
  const externalId = uniqueId('aud');
  const res = await api('POST', `${v11}/Requests`, { body: phiRequest(externalId) });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

const attachmentForm = () =>
  multipart([
    { name: 'file', file: { fileName: PHI.fileName, contentType: 'application/pdf', bytes: sample.pdf() } },
    { name: 'description', value: PHI.description },
  ]);

const newAttachment = async (externalId: string) => {
  const { body, contentType } = attachmentForm();
  const res = await api('POST', `${v11}/Requests/${externalId}/Attachments`, {
    rawBody: body,
    headers: { 'content-type': contentType },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.attachmentId as string;
};

const portalAccountBody = (externalId = uniqueId('pacc')) => ({
  externalId,
  clientUserId: tenant.clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01'],
  displayName: PHI.displayName,
  username: PHI.username,
  password: PHI.password,
  totpSecret: PHI.totpSecret,
});

const newPortalAccount = async (version: string) => {
  const body = portalAccountBody();
  const res = await api('POST', `${version}/Portals/accounts`, { body });
  expect(res.status, res.text).toBe(201);
  return body.externalId;
};

const newAccessToken = async (externalId: string) => {
  const res = await api('POST', `${v1}/ServiceReviews/requests/${externalId}/rpa`, {
    body: { clientUserId: tenant.clientUserId },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.accessToken as string;
};

let payerId: string;

const newPayerConnection = async () => {
  const body = connectionBody(tenant.clientUserId, payerId);
  const res = await api('POST', PAYER_CONNECTIONS, { body });
  expect(res.status, res.text).toBe(201);
  return body;
};

/** One call of a route, and what its event must say. */
interface Scenario {
  path: Record<string, string>;
  options?: Parameters<typeof call>[2];
  status: number;
  ids: Record<string, unknown>;
  clientUserId?: string | null;
  /** The scraper-token route: the caller as the token names it. */
  keyId?: 'token';
  /** A redirect, answered as is. */
  unfollowed?: true;
}

/**
 * A successful call of each audited route, keyed by `METHOD path`; the route table is iterated, so
 * a new audited route fails here until it has a scenario.
 */
const scenarios: Record<string, () => Promise<Scenario>> = {
  [`PUT ${v1}/Requests/{appointmentId}`]: async () => {
    const id = uniqueId('aud');
    return {
      path: { appointmentId: id },
      options: { body: phiRequest(id) },
      status: 201,
      ids: { requestExternalId: id },
    };
  },
  [`PATCH ${v1}/Requests/{appointmentId}`]: async () => {
    const id = await newRequest();
    return {
      path: { appointmentId: id },
      options: {
        body: { patient: { lastName: PHI.lastName } },
        headers: { 'content-type': 'application/merge-patch+json' },
      },
      status: 200,
      ids: { requestExternalId: id },
    };
  },
  [`POST ${v11}/Requests`]: async () => {
    const id = uniqueId('aud');
    return { path: {}, options: { body: phiRequest(id) }, status: 201, ids: { requestExternalId: id } };
  },
  [`PUT ${v11}/Requests/{externalId}`]: async () => {
    const id = await newRequest();
    return { path: { externalId: id }, options: { body: phiRequest(id) }, status: 200, ids: { requestExternalId: id } };
  },
  // A dry run of a submission to the payer's API: the request's payer has an endpoint and the organization
  // a connection to it, so the Bundle is built and answered; nothing is sent.
  [`POST ${v11}/Requests/{externalId}/submit`]: async () => {
    const id = uniqueId('aud');
    const body = phiRequest(id);
    const created = await api('POST', `${v11}/Requests`, {
      body: { ...body, patient: { ...body.patient, PayerId: payerId } },
    });
    expect(created.status, created.text).toBe(201);
    await newPayerConnection();
    return {
      path: { externalId: id },
      options: { body: { clientUserId: tenant.clientUserId, dryRun: true } },
      status: 200,
      ids: { requestExternalId: id },
      clientUserId: tenant.clientUserId,
    };
  },
  // A cancel of a claim sent through the payer's API (its run as the submission left it): the cancel's run is
  // queued and started.
  [`POST ${v11}/Requests/{externalId}/cancel`]: async () => {
    const id = uniqueId('aud');
    const body = phiRequest(id);
    const created = await api('POST', `${v11}/Requests`, {
      body: { ...body, patient: { ...body.patient, PayerId: payerId } },
    });
    expect(created.status, created.text).toBe(201);
    const connection = await newPayerConnection();
    await storedRun(tenant, id, {
      kind: 'submit',
      channel: 'pas',
      payerConnectionId: connection.externalId,
      submission: { bundleIdentifier: crypto.randomUUID(), sentAt: new Date().toISOString() },
      outcome: 'submitted',
    });
    return {
      path: { externalId: id },
      options: { body: { clientUserId: tenant.clientUserId } },
      status: 202,
      ids: { requestExternalId: id, runId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      clientUserId: tenant.clientUserId,
    };
  },
  [`GET ${v11}/Requests/{externalId}`]: async () => {
    const id = await newRequest();
    return { path: { externalId: id }, status: 200, ids: { requestExternalId: id } };
  },
  [`GET ${v11}/Requests/{externalId}/authorization/history`]: async () => {
    const id = await newRequest();
    return { path: { externalId: id }, status: 200, ids: { requestExternalId: id } };
  },
  [`POST ${v11}/Requests/{externalId}/Attachments`]: async () => {
    const id = await newRequest();
    const { body, contentType } = attachmentForm();
    return {
      path: { externalId: id },
      options: { rawBody: body, headers: { 'content-type': contentType } },
      status: 201,
      ids: { requestExternalId: id, attachmentId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    };
  },
  [`GET ${v11}/Requests/{externalId}/Attachments`]: async () => {
    const id = await newRequest();
    await newAttachment(id);
    return { path: { externalId: id }, status: 200, ids: { requestExternalId: id } };
  },
  ...Object.fromEntries(
    [
      ['GET', '', 200],
      ['GET', '/download', 303],
      ['DELETE', '', 204],
    ].map(([method, suffix, status]) => [
      `${method} ${v11}/Requests/{externalId}/Attachments/{attachmentId}${suffix}`,
      async (): Promise<Scenario> => {
        const id = await newRequest();
        const attachmentId = await newAttachment(id);
        return {
          path: { externalId: id, attachmentId },
          status: status as number,
          ids: { requestExternalId: id, attachmentId },
          ...(status === 303 ? { unfollowed: true as const } : {}),
        };
      },
    ]),
  ),
  ...Object.fromEntries(
    [v1, v11].flatMap((version) => [
      [
        `POST ${version}/Portals/accounts`,
        async (): Promise<Scenario> => {
          const body = portalAccountBody();
          return {
            path: {},
            options: { body },
            status: 201,
            ids: { portalAccountExternalId: body.externalId },
            clientUserId: tenant.clientUserId,
          };
        },
      ],
      [
        `GET ${version}/Portals/accounts/{externalId}/list`,
        async (): Promise<Scenario> => {
          await newPortalAccount(version);
          return { path: { externalId: tenant.clientUserId }, status: 200, ids: {}, clientUserId: tenant.clientUserId };
        },
      ],
      [
        `GET ${version}/Portals/accounts/{externalId}`,
        async (): Promise<Scenario> => {
          const id = await newPortalAccount(version);
          return { path: { externalId: id }, status: 200, ids: { portalAccountExternalId: id } };
        },
      ],
      [
        `PUT ${version}/Portals/accounts/{externalId}`,
        async (): Promise<Scenario> => {
          const id = await newPortalAccount(version);
          const { externalId: _, ...replacement } = portalAccountBody(id);
          return {
            path: { externalId: id },
            options: { body: replacement },
            status: 200,
            ids: { portalAccountExternalId: id },
            clientUserId: tenant.clientUserId,
          };
        },
      ],
      [
        `DELETE ${version}/Portals/accounts/{externalId}`,
        async (): Promise<Scenario> => {
          const id = await newPortalAccount(version);
          return { path: { externalId: id }, status: 204, ids: { portalAccountExternalId: id } };
        },
      ],
      [
        `POST ${version}/Portals/accounts/filter`,
        async (): Promise<Scenario> => {
          await newPortalAccount(version);
          return {
            path: {},
            options: { body: { clientUserId: tenant.clientUserId, search: PHI.username } },
            status: 200,
            ids: {},
            clientUserId: tenant.clientUserId,
          };
        },
      ],
    ]),
  ),
  [`POST ${PAYER_CONNECTIONS}`]: async () => {
    const body = connectionBody(tenant.clientUserId, payerId);
    return {
      path: {},
      options: { body },
      status: 201,
      ids: { payerConnectionExternalId: body.externalId },
      clientUserId: tenant.clientUserId,
    };
  },
  [`GET ${PAYER_CONNECTIONS}/{externalId}/list`]: async () => {
    await newPayerConnection();
    return { path: { externalId: tenant.clientUserId }, status: 200, ids: {}, clientUserId: tenant.clientUserId };
  },
  [`GET ${PAYER_CONNECTIONS}/{externalId}`]: async () => {
    const { externalId } = await newPayerConnection();
    return { path: { externalId }, status: 200, ids: { payerConnectionExternalId: externalId } };
  },
  [`PUT ${PAYER_CONNECTIONS}/{externalId}`]: async () => {
    const { externalId, ...replacement } = await newPayerConnection();
    return {
      path: { externalId },
      options: { body: { ...replacement, status: 'disabled' } },
      status: 200,
      ids: { payerConnectionExternalId: externalId },
      clientUserId: tenant.clientUserId,
    };
  },
  [`DELETE ${PAYER_CONNECTIONS}/{externalId}`]: async () => {
    const { externalId } = await newPayerConnection();
    return { path: { externalId }, status: 204, ids: { payerConnectionExternalId: externalId } };
  },
  [`POST ${v1}/ServiceReviews/requests/{requestExternalId}/rpa`]: async () => {
    const id = await newRequest();
    return {
      path: { requestExternalId: id },
      options: { body: { clientUserId: tenant.clientUserId } },
      status: 200,
      ids: { requestExternalId: id },
      clientUserId: tenant.clientUserId,
    };
  },
  [`GET ${v1}/ServiceReviews/requests/{requestExternalId}/rpa/session`]: async () => {
    const id = await newRequest();
    const token = await newAccessToken(id);
    return {
      path: { requestExternalId: id },
      options: { apiKey: null, headers: { authorization: `Bearer ${token}` } },
      status: 200,
      ids: { requestExternalId: id },
      clientUserId: tenant.clientUserId,
      keyId: 'token',
    };
  },
  // The request's payer's account needs attention: the run is started, and ends without a browser.
  [`POST ${v1}/ServiceReviews/requests/{requestExternalId}/rpa/view-on-page`]: async () => {
    const id = await newRequest();
    return {
      path: { requestExternalId: id },
      options: { body: { clientUserId: tenant.clientUserId } },
      status: 202,
      ids: { requestExternalId: id, runId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      clientUserId: tenant.clientUserId,
    };
  },
  [`GET ${v1}/ServiceReviews/requests/{requestExternalId}/rpa/runs/{runId}`]: async () => {
    const id = await newRequest();
    const run = await storedRun(tenant, id);
    return {
      path: { requestExternalId: id, runId: run.runId },
      status: 200,
      ids: { requestExternalId: id, runId: run.runId },
    };
  },
  [`POST ${v1}/ServiceReviews/requests/rpa/batch/check-auth-status`]: async () => {
    const ids = [await newRequest(), await newRequest()];
    return {
      path: {},
      options: { body: { clientUserId: tenant.clientUserId, requestExternalIds: ids } },
      status: 202,
      ids: { requestExternalIds: ids, batchId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      clientUserId: tenant.clientUserId,
    };
  },
  [`POST ${v11}/Webhooks`]: async () => ({
    path: {},
    options: { body: { url: 'https://hooks.example.com/audit', events: ['automation.run_finished'] } },
    status: 201,
    ids: { webhookId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
  }),
  [`GET ${v11}/Webhooks`]: async () => ({ path: {}, status: 200, ids: {} }),
  ...Object.fromEntries(
    [
      ['GET', '', 200],
      ['DELETE', '', 204],
      ['POST', '/rotate-secret', 200],
      ['POST', '/test', 202],
    ].map(([method, suffix, status]) => [
      `${method} ${v11}/Webhooks/{webhookId}${suffix}`,
      async (): Promise<Scenario> => {
        const webhookId = await newWebhook();
        return { path: { webhookId }, status: status as number, ids: { webhookId } };
      },
    ]),
  ),
  [`GET ${v11}/Webhooks/{webhookId}/deliveries`]: async () => {
    const webhookId = await newWebhook();
    return { path: { webhookId }, status: 200, ids: { webhookId } };
  },
  [`POST ${v11}/Webhooks/{webhookId}/deliveries/{deliveryId}/redeliver`]: async () => {
    const webhookId = await newWebhook();
    const { deliveryId } = await storedDelivery(tenant.clientId, webhookId);
    return { path: { webhookId, deliveryId }, status: 202, ids: { webhookId, deliveryId } };
  },
  [`GET ${v1}/ServiceReviews/requests/rpa/batch/check-auth-status/{batchId}`]: async () => {
    const started = await api('POST', `${v1}/ServiceReviews/requests/rpa/batch/check-auth-status`, {
      body: { clientUserId: tenant.clientUserId, requestExternalIds: [await newRequest()] },
    });
    expect(started.status, started.text).toBe(202);
    return { path: { batchId: started.body.batchId }, status: 200, ids: { batchId: started.body.batchId } };
  },
};

beforeAll(async () => {
  [tenant, other, payerId] = await Promise.all([newTenant('audit'), newTenant('audit-other'), payerWithApi('AUDIT')]);
  // The automation's account for the requests' payer, marked as the portal's refusal leaves it: runs
  // started here end at once, with no browser or portal involved.
  const account = { ...portalAccountBody('audit-automation'), payerIds: [validRequest('x').patient.PayerId!] };
  const created = await api('POST', `${v11}/Portals/accounts`, { body: account });
  expect(created.status, created.text).toBe(201);
  const at = new Date().toISOString();
  await dynamoPortalAccountStore.setLastLogin(
    tenant.clientId,
    account.externalId,
    { result: 'failed', at },
    { reason: 'wrong_password', since: at, runId: 'audit' },
  );
});

/** The audited routes, each with its audit spec. */
const audited = routes.flatMap((route) => {
  const audit = routeAudit[route.handler];
  return audit ? [{ ...route, audit }] : [];
});
const keyOf = (route: Route) => `${route.method} ${route.path}`;

describe('the route table declares the audit of every route', () => {
  it('every route has audit metadata, or false; an action `<resource>.<verb>` naming its resource type', () => {
    for (const route of routes) {
      const audit = routeAudit[route.handler];
      expect(audit, keyOf(route)).toBeDefined();
      if (audit === false) continue;
      expect(audit.action, keyOf(route)).toMatch(/^[a-z][A-Za-z]*(\.[a-z][A-Za-z]*)+$/);
      expect(audit.action.startsWith(audit.resource.startsWith('rpa') ? 'rpa.' : audit.resource)).toBe(true);
      // Id variables must be the route's own.
      for (const variable of Object.keys(audit.ids ?? {})) expect(route.path).toContain(`{${variable}}`);
    }
  });

  it("leaves out only the payers' JWKS and notifications, the schemas and the API's description: no API client reads PHI", () => {
    expect(routes.filter((route) => routeAudit[route.handler] === false).map((route) => route.handler)).toEqual([
      'payers/get-payer-jwks',
      'payers/receive-payer-notification',
      'schemas/list-schemas',
      'schemas/get-schema',
      'schemas/validate-payload',
      'docs/get-openapi-document',
      'docs/get-api-reference',
      'docs/get-api-reference-script',
    ]);
  });

  it('has a scenario below for every audited route', () => {
    expect(audited.map(keyOf).filter((key) => !scenarios[key])).toEqual([]);
  });
});

describe('an intent and one outcome per call of an audited route', () => {
  it.each(audited.map((route) => [keyOf(route), route] as const))('%s', async (_, route) => {
    const scenario = await scenarios[keyOf(route)]!();
    const path = fillPath(route.path, scenario.path);
    const res = scenario.unfollowed ? await getUnfollowed(path) : await api(route.method, path, scenario.options);
    expect(res.status, res.text).toBe(scenario.status);

    const [intent, outcome] = await theIntentAndOutcomeOf(res);
    expect(outcome).toEqual({
      ...lineFields('outcome'),
      action: route.audit.action,
      route: keyOf(route),
      outcome: scenario.status,
      clientId: tenant.clientId,
      credential: scenario.keyId === 'token' ? 'scraperToken' : 'apiKey',
      keyId: expect.any(String),
      clientUserId: scenario.clientUserId ?? null,
      resource: { type: route.audit.resource, ids: scenario.ids },
      requestId: res.headers.get('x-amzn-requestid'),
      lambdaRequestId: expect.any(String),
      sourceIp: expect.any(String),
    });
    // The intent says the same of the call, but what only its end knows: the status, a created id, and
    // for the scraper session the caller, whom the handler verifies.
    const verifiedByHandler = scenario.keyId === 'token' ? { clientId: null, keyId: null, clientUserId: null } : {};
    expect(intent).toEqual({
      ...outcome,
      ...lineFields('intent'),
      outcome: null,
      ...verifiedByHandler,
      resource: { type: route.audit.resource, ids: expect.any(Object) },
    });
    expect(outcome.resource.ids).toMatchObject(intent.resource.ids);
    for (const line of [intent, outcome]) expectNoPhi(line);
  });

  it('writes the same lines to stdout, where the deployed trail reads them', async () => {
    const res = await api('GET', `${v11}/Requests/${await newRequest()}`);
    const requestId = `"requestId":"${res.headers.get('x-amzn-requestid')}"`;
    const inFile = (await readFile(auditFile, 'utf8')).split('\n').filter((line) => line.includes(requestId));
    expect(inFile).toHaveLength(2);
    const output = await readFile(inject('stackOutputFile'), 'utf8');
    for (const line of inFile) expect(output).toContain(`${line}\n`);
  });

  it('records the API key id the authorizer resolved, the same for every call of a client', async () => {
    const id = await newRequest();
    const [first, second] = [
      await theOutcomeOf(await api('GET', `${v11}/Requests/${id}`)),
      await theOutcomeOf(await api('GET', `${v11}/Requests/${id}/Attachments`)),
    ];
    expect(first.keyId).toBeTruthy();
    expect(second.keyId).toBe(first.keyId);
    const theirs = await theOutcomeOf(await call('GET', `${v11}/Requests/${id}`, { apiKey: other.apiKey }));
    expect(theirs.keyId).toBeTruthy();
    expect(theirs.keyId).not.toBe(first.keyId);
  });

  it('records the scraper token’s id as the key id: a new token, a new id', async () => {
    const id = await newRequest();
    const session = `${v1}/ServiceReviews/requests/${id}/rpa/session`;
    const outcomes = [];
    for (const token of [await newAccessToken(id), await newAccessToken(id)]) {
      outcomes.push(await theOutcomeOf(await call('GET', session, { headers: { authorization: `Bearer ${token}` } })));
    }
    expect(outcomes.map((line) => line.outcome)).toEqual([200, 200]);
    expect(outcomes[0]!.keyId).not.toBe(outcomes[1]!.keyId);
  });

  it('audits the schemas routes never', async () => {
    const before = (await readLines()).length;
    const res = await api('GET', `${v11}/Schemas`);
    expect(res.status).toBe(200);
    expect(await linesOf(res)).toEqual([]);
    // Other files' requests may append meanwhile; this one's id is simply absent.
    expect((await readLines()).length).toBeGreaterThanOrEqual(before);
  });
});

describe('failures are audited with the status the client received', () => {
  /** A refusal by the handler: its intent, then the problem's status; the problem body's requestId is the function's. */
  const expectProblemLines = async (res: ApiResponse, status: number) => {
    expect(res.status, res.text).toBe(status);
    const [intent, outcome] = await theIntentAndOutcomeOf(res);
    expect(outcome.outcome).toBe(status);
    expect(outcome.lambdaRequestId).toBe(res.body.requestId);
    expect(intent.lambdaRequestId).toBe(res.body.requestId);
    for (const line of [intent, outcome]) expectNoPhi(line);
    return outcome;
  };

  /** A refusal before the handler (its body): no intent, since nothing stored was touched; one outcome. */
  const expectRefusedBeforeHandler = async (res: ApiResponse, status: number) => {
    expect(res.status, res.text).toBe(status);
    const lines = await linesOf(res);
    expect(lines.map((line) => line.phase)).toEqual(['outcome']);
    expectNoPhi(lines[0]!);
    return lines[0]!;
  };

  it('404 for an unknown request', async () => {
    const outcome = await expectProblemLines(await api('GET', `${v11}/Requests/no-such-request`), 404);
    expect(outcome).toMatchObject({
      action: 'request.read',
      clientId: tenant.clientId,
      resource: { type: 'request', ids: { requestExternalId: 'no-such-request' } },
    });
  });

  it("404 for another client's request, under the caller's client id", async () => {
    const id = await newRequest();
    const res = await call('GET', `${v11}/Requests/${id}/Attachments`, { apiKey: other.apiKey });
    const outcome = await expectProblemLines(res, 404);
    expect(outcome).toMatchObject({
      action: 'attachment.list',
      clientId: other.clientId,
      resource: { ids: { requestExternalId: id } },
    });
  });

  it('400 Validation result for a refused body: the action, no body value, and no created id', async () => {
    const id = uniqueId('aud');
    const res = await api('POST', `${v11}/Requests`, { body: { ...phiRequest(id), quantity: 'many' } });
    const outcome = await expectRefusedBeforeHandler(res, 400);
    expect(outcome).toMatchObject({ action: 'request.create', outcome: 400, resource: { type: 'request', ids: {} } });
  });

  it('400 for a malformed path id: recorded as null, not as sent', async () => {
    const res = await api('GET', `${v11}/Requests/${encodeURIComponent(`${PHI.lastName} ${PHI.firstName}`)}`);
    const outcome = await expectProblemLines(res, 400);
    expect(outcome.resource.ids).toEqual({ requestExternalId: null });
  });

  it('a client user id that is not an id (a name typed into it) is recorded as null', async () => {
    const res = await api('POST', `${v11}/Portals/accounts/filter`, {
      body: { clientUserId: `${PHI.firstName} ${PHI.lastName}` },
    });
    const outcome = await expectRefusedBeforeHandler(res, 400);
    expect(outcome).toMatchObject({ action: 'portalAccount.filter', outcome: 400, clientUserId: null });
  });

  it('401 for an invalid scraper token: no caller known, still an intent and one outcome', async () => {
    const id = await newRequest();
    const res = await call('GET', `${v1}/ServiceReviews/requests/${id}/rpa/session`, {
      headers: { authorization: 'Bearer not-a-token' },
    });
    const outcome = await expectProblemLines(res, 401);
    expect(outcome).toMatchObject({
      action: 'rpa.session.read',
      credential: 'scraperToken',
      clientId: null,
      keyId: null,
      resource: { ids: { requestExternalId: id } },
    });
  });

  it('an idempotent replay is audited too, with the replayed status (its handler does not run again)', async () => {
    const id = uniqueId('aud');
    const headers = { 'idempotency-key': uniqueId('key') };
    const first = await api('POST', `${v11}/Requests`, { body: phiRequest(id), headers });
    const replay = await api('POST', `${v11}/Requests`, { body: phiRequest(id), headers });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await linesOf(first)).map((line) => line.phase)).toEqual(['intent', 'outcome']);
    expect((await linesOf(replay)).map((line) => line.phase)).toEqual(['outcome']);
    for (const res of [first, replay]) {
      expect(await theOutcomeOf(res)).toMatchObject({
        action: 'request.create',
        outcome: 201,
        resource: { ids: { requestExternalId: id } },
      });
    }
  });
});

describe('the local audit file', () => {
  it('is readable by its owner only', async () => {
    expect((await stat(auditFile)).mode & 0o777).toBe(0o600);
  });
});
