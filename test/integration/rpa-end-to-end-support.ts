import { readFileSync } from 'node:fs';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import {
  DescribeExecutionCommand,
  type ExecutionListItem,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  ListExecutionsCommand,
  SFNClient,
} from '@aws-sdk/client-sfn';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect, inject } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { s3 } from '#lib/aws/s3';
import { bucketName, tableName } from '#lib/config/resources';
import { SANDBOX_PAYER_ID, SANDBOX_SERVICE_FROM_DATE, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { baseUrl, call, newTenant } from '#test/support/api';
import { batchPath, rpaOf } from './rpa-support.ts';

/*
 * Helpers of the end-to-end tests of the automation (rpa-end-to-end*.test.ts): everything goes through
 * the shared local stack (test/support/global-setup.ts) over HTTP, its local Step Functions and real
 * headless Chromium against its sandbox portal; these helpers only create what a client would, wait for
 * runs, and read what the stack left behind (executions, table items, objects, its process's output).
 */
export type Tenant = Awaited<ReturnType<typeof newTenant>>;

const stackEnv = inject('stackEnv');
const portalUrl = stackEnv.SANDBOX_PORTAL_URL!;
export const taskTimeoutSeconds = inject('taskTimeoutSeconds');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `read` until `done` holds of what it returns, for at most `timeoutMs`; the last value either way. */
export const pollUntil = async <T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs, intervalMs = 250 }: { timeoutMs: number; intervalMs?: number },
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(intervalMs);
  }
};

const terminal = (status: string) => status === 'succeeded' || status === 'failed';

/** GETs a run (or a batch) at its Location until it has ended; fails the test if it did not within the bound. */
export const settledRun = async (tenant: Tenant, location: string, timeoutMs = 90_000) => {
  const res = await pollUntil(
    () => call('GET', location, { apiKey: tenant.apiKey }),
    (current) => current.status !== 200 || terminal(current.body.status),
    { timeoutMs },
  );
  expect(res.status, res.text).toBe(200);
  expect(terminal(res.body.status), `run still ${res.body.status} after ${timeoutMs} ms`).toBe(true);
  return res.body;
};

export const settledBatch = async (tenant: Tenant, location: string, timeoutMs = 120_000) => {
  const res = await pollUntil(
    () => call('GET', location, { apiKey: tenant.apiKey }),
    (current) => current.status !== 200 || current.body.status === 'done',
    { timeoutMs },
  );
  expect(res.status, res.text).toBe(200);
  expect(res.body.status, `batch still running after ${timeoutMs} ms`).toBe('done');
  return res.body;
};

/** A portal account of the tenant's organization on the sandbox portal, for these payers. */
export const createPortalAccount = async (
  tenant: Tenant,
  account: { externalId: string; payerIds: string[]; username: string; password: string; totpSecret?: string },
) => {
  const res = await call('POST', '/api/external/v1.1/Portals/accounts', {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId, portalId: 'sandbox', ...account },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
};

export const portalAccount = async (tenant: Tenant, externalId: string) => {
  const res = await call('GET', `/api/external/v1.1/Portals/accounts/${encodeURIComponent(externalId)}`, {
    apiKey: tenant.apiKey,
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
};

export interface Member {
  memberId: string;
  firstName: string;
  lastName: string;
  birthDate: string;
}

/**
 * A complete request for `member` at `payerId`, as a vendor would send it: two rendering providers, two
 * diagnoses and two procedures, so the portal's form has rows to add. Its first date of service is the
 * sandbox's (a status lookup names it). A null `payerId`: no `patient.PayerId`, as the spec allows.
 */
const automatedRequestBody = (externalId: string, member: Member, payerId: string | null) => ({
  externalId,
  requestTypeCode: 'HS',
  certificationTypeCode: 'I',
  serviceTypeCode: '2',
  placeOfServiceCode: '22',
  admissionTypeCode: '2',
  fromDate: SANDBOX_SERVICE_FROM_DATE,
  toDate: '2026-03-06',
  patient: {
    ...member,
    genderCode: 'U',
    Payer: 'Sandbox Health Plan',
    ...(payerId === null ? {} : { PayerId: payerId }),
  },
  requestingProvider: { roleCode: '1P', npi: '1234567893', firstName: 'Jane', lastName: 'Doe' },
  renderingProviders: [
    { roleCode: 'SJ', npi: '1245319599', firstName: 'Sam', lastName: 'Rivera' },
    { roleCode: 'FA', organizationName: 'Example Imaging & Co' },
  ],
  diagnoses: [
    { qualifierCode: 'ABK', code: 'M54.5' },
    { qualifierCode: 'ABF', code: 'M51.26' },
  ],
  procedures: [
    { qualifierCode: 'HC', code: '72148', quantity: 1 },
    { qualifierCode: 'HC', code: '72149', quantity: 2 },
  ],
});

export const createRequest = async (tenant: Tenant, externalId: string, member: Member, payerId: string | null) => {
  const res = await call('POST', '/api/external/v1.1/Requests', {
    apiKey: tenant.apiKey,
    body: automatedRequestBody(externalId, member, payerId),
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

export const getRequest = async (tenant: Tenant, externalId: string) => {
  const res = await call('GET', `/api/external/v1.1/Requests/${encodeURIComponent(externalId)}`, {
    apiKey: tenant.apiKey,
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
};

export const startViewOnPage = (tenant: Tenant, externalId: string, headers: Record<string, string> = {}) =>
  call('POST', `${rpaOf(externalId)}/view-on-page`, {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId },
    headers,
  });

export const startBatch = (tenant: Tenant, requestExternalIds: string[], headers: Record<string, string> = {}) =>
  call('POST', batchPath, {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId, requestExternalIds },
    headers,
  });

/** `POST …/rpa`: a scraper token and the session's URI. */
export const scraperAccess = async (tenant: Tenant, externalId: string) => {
  const res = await call('POST', rpaOf(externalId), {
    apiKey: tenant.apiKey,
    body: { clientUserId: tenant.clientUserId },
  });
  expect(res.status, res.text).toBe(200);
  return res.body as { accessToken: string; scraperUri: string };
};

/**
 * GET of the scraper session, as a script or a browser would: the token in a header, or a `?token=`
 * link, which the session exchanges for its cookie (303), then the redirect followed with that cookie.
 */
export const openSession = async (
  scraperUri: string,
  token: string,
  { via = 'header', accept }: { via?: 'header' | 'query'; accept?: string } = {},
) => {
  const headers: Record<string, string> = accept ? { accept } : {};
  let response: Response;
  if (via === 'query') {
    const link = `${scraperUri}?token=${encodeURIComponent(token)}`;
    response = await fetch(link, { headers, redirect: 'manual' });
    if (response.status === 303) {
      const cookie = response.headers.getSetCookie()[0]!.split(';')[0]!;
      response = await fetch(response.headers.get('location')!, { headers: { ...headers, cookie } });
    }
  } else {
    response = await fetch(scraperUri, { headers: { ...headers, authorization: `Bearer ${token}` } });
  }
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
};

/** The path of a Location header (the gateway answers absolute paths). */
export const locationOf = (res: { headers: Headers }) => {
  const location = res.headers.get('location');
  expect(location).toBeTruthy();
  return location!.startsWith('http') ? new URL(location!).pathname : location!;
};

// The sandbox portal, seen as a person at the provider's front desk would see it (plain HTTP, no browser).

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
  redirect: 'manual' as const,
});

/** One sign-in attempt on the portal: its HTTP status, and the session cookie when it succeeded. */
export const portalSignIn = async (username: string, password: string) => {
  const res = await fetch(`${portalUrl}/login`, form({ username, password }));
  await res.text();
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  return { status: res.status, location: res.headers.get('location'), cookie };
};

/** The portal's own status lookup (member id + provider reference), signed in as `user`. */
export const portalStatusLookup = async (
  user: { username: string; password: string },
  query: { memberId: string; reference: string },
) => {
  const signedIn = await portalSignIn(user.username, user.password);
  expect(signedIn).toMatchObject({ status: 303, location: '/home' });
  const headers = { cookie: signedIn.cookie! };
  const page = await (await fetch(`${portalUrl}/authorizations/status`, { headers })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  expect(csrf).toBeTruthy();
  const lookup = form({ csrf: csrf!, ...query });
  const res = await fetch(`${portalUrl}/authorizations/status`, {
    ...lookup,
    headers: { ...lookup.headers, ...headers },
  });
  const html = await res.text();
  expect(res.status).toBe(200);
  return /<section id="status-result" data-status="([a-z_]+)"/.exec(html)?.[1];
};

// Secrets: every form worth looking for, and everything the stack keeps or shows.

/** base64 of `bytes` at each of the 3 alignments it could have inside a longer encoded blob (and base64url). */
const base64Needles = (bytes: Buffer) =>
  [0, 1, 2].flatMap((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const inner = encoded.slice(Math.ceil((offset * 4) / 3) + 1, -4);
    return [inner, inner.replace(/\+/g, '-').replace(/\//g, '_')];
  });

const base32Bytes = (text: string) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bits = [...text.replace(/=+$/, '')].map((c) => alphabet.indexOf(c).toString(2).padStart(5, '0')).join('');
  return Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => Number.parseInt(byte, 2)));
};

/** A secret as typed, lower-cased, in hex and in base64; a TOTP secret also as the bytes it encodes. */
export const secretForms = (secret: string, { base32 = false } = {}) => {
  const typed = Buffer.from(secret, 'utf8');
  const raw = base32 ? [base32Bytes(secret)] : [];
  return [
    secret,
    secret.toLowerCase(),
    typed.toString('hex'),
    typed.toString('hex').toUpperCase(),
    ...base64Needles(typed),
    ...raw.flatMap((bytes) => [bytes.toString('hex'), bytes.toString('hex').toUpperCase(), ...base64Needles(bytes)]),
  ];
};

const sfn = new SFNClient({
  endpoint: stackEnv.AWS_ENDPOINT_URL_SFN,
  region: stackEnv.AWS_REGION,
  credentials: { accessKeyId: stackEnv.AWS_ACCESS_KEY_ID!, secretAccessKey: stackEnv.AWS_SECRET_ACCESS_KEY! },
});

/** Every execution of both state machines, with its description and its whole history (with data). */
export const allExecutions = async () => {
  const listed: ExecutionListItem[] = [];
  for (const stateMachineArn of [
    stackEnv.VIEW_ON_PAGE_STATE_MACHINE_ARN!,
    stackEnv.CHECK_AUTH_STATUS_STATE_MACHINE_ARN!,
  ]) {
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(new ListExecutionsCommand({ stateMachineArn, nextToken }));
      listed.push(...(page.executions ?? []));
      nextToken = page.nextToken;
    } while (nextToken);
  }
  return Promise.all(
    listed.map(async ({ executionArn }) => {
      const events: HistoryEvent[] = [];
      let nextToken: string | undefined;
      do {
        const page = await sfn.send(
          new GetExecutionHistoryCommand({ executionArn, includeExecutionData: true, nextToken }),
        );
        events.push(...(page.events ?? []));
        nextToken = page.nextToken;
      } while (nextToken);
      const { $metadata: _, ...description } = await sfn.send(new DescribeExecutionCommand({ executionArn }));
      return { executionArn: executionArn!, description, events };
    }),
  );
};

/** The raw items of every run and batch in the table, and of every item of these tenants. */
export const rawItems = async (clientIds: string[]) => {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: [
          'begins_with(sk, :run)',
          'sk = :batch',
          ...clientIds.map((_, i) => `begins_with(pk, :client${i})`),
        ].join(' OR '),
        ExpressionAttributeValues: {
          ':run': 'RPA#',
          ':batch': 'BATCH',
          ...Object.fromEntries(clientIds.map((clientId, i) => [`:client${i}`, `CLIENT#${clientId}#`])),
        },
        ExclusiveStartKey,
      }),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
};

/** What S3 says of each screenshot object: its metadata and headers. */
const screenshotHeads = (objectKeys: string[]) =>
  Promise.all(
    objectKeys.map(async (Key) => {
      const { $metadata: _, ...head } = await s3.send(new HeadObjectCommand({ Bucket: bucketName(), Key }));
      return { Key, ...head };
    }),
  );

/** Everything the stack's process has written so far (its handlers' logs at every level). */
export const stackOutput = () => readFileSync(inject('stackOutputFile'), 'utf8');

/** Fails on the first form of a secret found in `text`, naming where (never the secret). */
export const expectNoSecret = (text: string, needles: string[], where: string) => {
  for (const needle of needles) expect(text.includes(needle), `${where} holds a form of a secret`).toBe(false);
};

export interface FinishedRun {
  tenant: Tenant;
  externalId: string;
  runId: string;
}

/**
 * Scans everything the stack keeps or shows after these runs for any form of the secrets: (a) the history and
 * description of every execution, (b) the raw table items of every run and batch and of every item of the
 * runs' tenants, (c) each run's JSON and its request's scraper session as JSON and HTML, (d) every
 * screenshot's S3 metadata, (e) the stack process's output. Each source is first shown to hold these runs, so
 * that an empty or unrelated source cannot pass for a clean one.
 */
export const expectNoSecretsAnywhere = async (
  secrets: { passwords: string[]; totpSecrets: string[] },
  runs: FinishedRun[],
  executionArns: string[],
) => {
  const needles = [
    ...secrets.passwords.flatMap((password) => secretForms(password)),
    ...secrets.totpSecrets.flatMap((secret) => secretForms(secret, { base32: true })),
  ];

  const executions = await allExecutions();
  const ours = executions.filter((execution) => executionArns.includes(execution.executionArn));
  expect(ours.map((execution) => execution.executionArn).sort()).toEqual([...executionArns].sort());
  for (const execution of ours) expect(execution.description.status).not.toBe('RUNNING');
  const histories = JSON.stringify(ours);
  for (const run of runs) expect(histories).toContain(run.runId);
  for (const execution of executions) {
    expectNoSecret(JSON.stringify(execution), needles, `execution ${execution.executionArn}`);
  }

  const clientIds = [...new Set(runs.map((run) => run.tenant.clientId))];
  const items = await rawItems(clientIds);
  for (const run of runs) expect(items.some((item) => item.sk === `RPA#${run.runId}`)).toBe(true);
  for (const item of items) expectNoSecret(JSON.stringify(item), needles, `item ${item.pk} ${item.sk}`);

  for (const run of runs) {
    const view = await call('GET', `${rpaOf(run.externalId)}/runs/${run.runId}`, { apiKey: run.tenant.apiKey });
    expect(view.status).toBe(200);
    expectNoSecret(view.text, needles, `run ${run.runId}`);
    const { accessToken, scraperUri } = await scraperAccess(run.tenant, run.externalId);
    for (const accept of ['application/json', 'text/html']) {
      const page = await openSession(scraperUri, accessToken, { accept });
      expect(page.status).toBe(200);
      expect(page.text).toContain(run.runId);
      expectNoSecret(page.text, needles, `the ${accept} session of ${run.externalId}`);
    }
  }

  const objectKeys = items.flatMap((item) =>
    ((item.screenshots ?? []) as Array<{ objectKey: string }>).map((shot) => shot.objectKey),
  );
  for (const run of runs) {
    const shots = items.find((item) => item.sk === `RPA#${run.runId}`)!.screenshots as unknown[];
    if (shots.length > 0) expect(objectKeys.some((key) => key.includes(`/rpa/${run.runId}/`))).toBe(true);
  }
  for (const head of await screenshotHeads(objectKeys)) {
    expectNoSecret(JSON.stringify(head), needles, `screenshot ${head.Key}`);
  }

  // The worker logs each run's end at info level: the capture holds every level.
  const output = stackOutput();
  for (const run of runs) expect(output).toContain(`"runId":"${run.runId}"`);
  expectNoSecret(output, needles, "the stack's output");
};

export { baseUrl };

/** A new tenant whose organization has the sandbox portal's plain user as its account for the SANDBOX payer. */
export const automationTenant = async (label: string) => {
  const tenant = await newTenant(label);
  await createPortalAccount(tenant, {
    externalId: 'sandbox-front-desk',
    payerIds: [SANDBOX_PAYER_ID],
    username: SANDBOX_USERS[0]!.username,
    password: SANDBOX_USERS[0]!.password,
  });
  return tenant;
};

/** The sandbox portal's operator (docs/sandbox-portal.md, "The operator"): a form POST with its token. */
export const sandboxOperator = (path: string, form: Record<string, string>) =>
  fetch(`${portalUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { authorization: `Bearer ${stackEnv.SANDBOX_OPERATOR_TOKEN!}` },
    body: new URLSearchParams(form),
  });
