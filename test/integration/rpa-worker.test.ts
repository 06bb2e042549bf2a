import { randomBytes } from 'node:crypto';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { s3 } from '#lib/aws/s3';
import { bucketName, tableName } from '#lib/config/resources';
import { localKeyFile } from '#lib/crypto/key-sources';
import { rpaRunEntity } from '#lib/entities/rpa';
import { keys } from '#lib/object-keys';
import type { RunCredentialsRequest } from '#lib/portal/credentials-source';
import {
  type FilledForm,
  type PortalAuthorization,
  type PortalDriver,
  PortalFailure,
  type PortalFailureOutcome,
  type PortalSession,
} from '#lib/portal/drivers/driver';
import { dynamoAccountLeases } from '#lib/portal/dynamo-account-lease';
import { runCredentialsIssuer } from '#lib/portal/run-credentials';
import { encryptionContextOf, type PortalCredentials } from '#lib/portal-accounts/credentials';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { openPortalCredentials } from '#lib/portal-accounts/open-credentials';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { CredentialsRefused } from '#lib/runs/errors';
import type { ExecutionReader } from '#lib/runs/execution-reader';

type Browser = Parameters<PortalDriver['logIn']>[0];

import type { RpaBatchRecord, RpaRunRecord, RunKind } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { type PriorAuthorizationForm, priorAuthorizationFormOf } from '#lib/portal/prior-authorization-form';
import { rpaWorker } from '#lib/portal/worker';
import type { WorkerDependencies } from '#lib/portal/worker-context';
import { InvalidTaskInput, PortalAccountBusy, PortalUnavailable, RunNotFound } from '#lib/runs/errors';
import { s3ScreenshotStorage } from '#lib/runs/s3-screenshot-storage';
import { call, newTenant, uniqueId } from '#test/support/api';
import { sealV1WithLocalKey } from '#test/support/legacy-envelope';
import { newRequest, png } from './rpa-support.ts';

/*
 * The worker's task handlers against the real table, bucket and keyring, with a test driver (our
 * own PortalDriver port, scripted per test) instead of a browser: every named outcome, what is
 * recorded on the run, the request and the portal account, and that no secret is kept anywhere.
 * Credentials come from the run credentials function's own logic (lib/portal/run-credentials.ts) on the
 * same table and keyring, called in-process: the runs here are written by the test, so no execution
 * of the local Step Functions names them, and Step Functions (AWS) is stood in for by the executions
 * the API would have started for them. The Lambda path itself: rpa-run-credentials.test.ts and the
 * end-to-end tests.
 */
const PAYER = 'EHP01'; // the payer of test/support/fixtures.ts's requests

let tenant: Awaited<ReturnType<typeof newTenant>>;
const password = `pw-${randomBytes(9).toString('hex')}`;
const username = `front.desk.${randomBytes(4).toString('hex')}@clinic.example`;

const createAccount = async (change: Record<string, unknown> = {}) => {
  const externalId = uniqueId('acct');
  const res = await call('POST', '/api/external/v1.1/Portals/accounts', {
    apiKey: tenant.apiKey,
    body: {
      externalId,
      clientUserId: tenant.clientUserId,
      portalId: 'sandbox',
      payerIds: [PAYER],
      username,
      password,
      ...change,
    },
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

let accountId: string;
beforeAll(async () => {
  tenant = await newTenant('rpa-worker');
  accountId = await createAccount();
});

/** The executions the API would have started: by machine and name, their input (ids only). */
const executions = new Map<
  string,
  {
    clientId: string;
    requestExternalId?: string;
    runId?: string;
    portalAccountId?: string | undefined;
    batchId?: string;
    groups?: unknown[];
  }
>();
const runningExecutions: ExecutionReader = {
  read: async (machine, name) => {
    const input = executions.get(`${machine}:${name}`);
    return input ? { status: 'RUNNING', input: JSON.stringify(input) } : undefined;
  },
};
const issuer = runCredentialsIssuer({
  runs: dynamoRunStore,
  accounts: dynamoPortalAccountStore,
  executions: runningExecutions,
  open: (account) => openPortalCredentials(account),
});
/** The port as the Lambda adapter implements it: the answer, or a refusal as `credentials_refused`. */
const issueCredentials = async (request: RunCredentialsRequest): Promise<PortalCredentials> => {
  try {
    const { username, password, totpSecret } = await issuer.issue(request);
    return { username, password, totpSecret: totpSecret ?? null };
  } catch (error) {
    if (error instanceof CredentialsRefused) throw new PortalFailure('credentials_refused', error.reason);
    throw error;
  }
};

/** What the test driver does, step by step; and what it was given. */
interface Script {
  logIn?: () => Promise<void>;
  fill?: (form: PriorAuthorizationForm) => Promise<FilledForm>;
  read?: (n: number) => Promise<PortalAuthorization>;
}
interface Seen {
  credentials: PortalCredentials[];
  baseUrls: string[];
  timeoutsMs: number[];
  forms: PriorAuthorizationForm[];
  statusQueries: unknown[];
  /** Each status lookup's own bound, as the worker gave it. */
  lookupTimeoutsMs: Array<number | undefined>;
  screenshots: string[];
  sessionsClosed: number;
  browsersReleased: number;
}

const failure = (outcome: PortalFailureOutcome) => async (): Promise<never> => {
  throw new PortalFailure(outcome, `test: ${outcome}`);
};

const testWorker = (script: Script, overrides: Partial<WorkerDependencies> = {}) => {
  const seen: Seen = {
    credentials: [],
    baseUrls: [],
    timeoutsMs: [],
    forms: [],
    statusQueries: [],
    lookupTimeoutsMs: [],
    screenshots: [],
    sessionsClosed: 0,
    browsersReleased: 0,
  };
  const driver: PortalDriver = {
    portalId: 'sandbox',
    origins: (baseUrl) => [new URL(baseUrl).origin],
    logIn: async (_browser, credentials, { baseUrl, timeoutMs }) => {
      seen.credentials.push(credentials);
      seen.baseUrls.push(baseUrl);
      seen.timeoutsMs.push(timeoutMs);
      await script.logIn?.();
      const session: PortalSession = {
        fillPriorAuthorization: async (form) => {
          seen.forms.push(form);
          return script.fill ? script.fill(form) : { typed: {}, held: {} };
        },
        readAuthorizationStatus: async (query, options) => {
          seen.statusQueries.push(query);
          seen.lookupTimeoutsMs.push(options?.timeoutMs);
          return script.read ? script.read(seen.statusQueries.length) : { status: 'not_found' };
        },
        screenshot: async (label) => {
          seen.screenshots.push(label);
          return png(label);
        },
        close: async () => {
          seen.sessionsClosed++;
        },
      };
      return session;
    },
  };
  // The worker only hands the browser to the driver, which here is the test's own.
  const browser = { close: async () => undefined } as unknown as Browser;
  const worker = rpaWorker({
    runs: dynamoRunStore,
    requests: dynamoRequestStore,
    accounts: dynamoPortalAccountStore,
    leases: dynamoAccountLeases(),
    pauseBetweenLookupsMs: 0,
    openCredentials: issueCredentials,
    acquireBrowser: async () => browser,
    releaseBrowser: async () => {
      seen.browsersReleased++;
    },
    driverFor: (portalId) => (portalId === 'sandbox' ? driver : undefined),
    portalBaseUrl: (portalId) => (portalId === 'sandbox' ? 'http://127.0.0.1:9/portal' : undefined),
    formOf: priorAuthorizationFormOf,
    screenshots: s3ScreenshotStorage,
    ...overrides,
  });
  return { worker, seen };
};

/**
 * A queued run on a new request (or on `externalId`) and `account`, as the API leaves it, in its running
 * execution (a check-auth-status run in its batch's, `batchId` or a new one) unless `inExecution` is false.
 */
const queuedRun = async (
  kind: RunKind,
  options: { externalId?: string; batchId?: string; account?: string | null; inExecution?: boolean } = {},
) => {
  const externalId = options.externalId ?? (await newRequest(tenant.apiKey));
  const batchId = kind === 'check-auth-status' ? (options.batchId ?? crypto.randomUUID()) : options.batchId;
  const at = new Date().toISOString();
  const account = options.account === undefined ? accountId : options.account;
  const run: RpaRunRecord = {
    clientId: tenant.clientId,
    externalId,
    runId: uuidv7(),
    kind,
    ...(batchId ? { batchId } : {}),
    ...(account ? { portalAccountId: account, portalId: 'sandbox' } : {}),
    clientUserId: tenant.clientUserId,
    organizationId: tenant.organizationId,
    status: 'queued',
    steps: [
      { at, step: 'queued' },
      { at, step: 'portal account selected' },
    ],
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  await dynamoRunStore.createRun(run);
  const input = { clientId: tenant.clientId, requestExternalId: externalId, runId: run.runId };
  // The execution's input names the run's account, as the start fixes it (lib/runs/runs.ts).
  if (options.inExecution !== false && kind === 'view-on-page') {
    executions.set(`${kind}:${run.runId}`, { ...input, portalAccountId: account ?? undefined });
  }
  if (options.inExecution !== false && batchId) {
    const batch = executions.get(`${kind}:${batchId}`) ?? { clientId: tenant.clientId, batchId, groups: [] };
    const groups = batch.groups as Array<{ portalAccountId?: string; items: unknown[] }>;
    const group = groups.find((candidate) => candidate.portalAccountId === (account ?? undefined));
    if (group) group.items.push({ requestExternalId: externalId, runId: run.runId });
    else
      groups.push({
        portalAccountId: account ?? undefined,
        items: [{ requestExternalId: externalId, runId: run.runId }],
      });
    executions.set(`${kind}:${batchId}`, batch);
  }
  return { input, run };
};

/** A batch's group of one account, as the state machine's Map hands it to CheckPortalStatus. */
const groupOf = (inputs: Array<{ requestExternalId: string; runId: string }>, account = accountId) => ({
  clientId: tenant.clientId,
  batchId: 'batch-1',
  portalAccountId: account,
  items: inputs.map(({ requestExternalId, runId }) => ({ requestExternalId, runId })),
});
const ALL_DONE = { remaining: [], more: false };

/** Deadlines as a call received them: what was given, less the few ms spent before the call. */
const expectAbout = (received: Array<number | undefined>, given: number[]) => {
  expect(received).toHaveLength(given.length);
  received.forEach((ms, i) => {
    expect(ms, String(i)).toBeLessThanOrEqual(given[i]!);
    expect(ms, String(i)).toBeGreaterThan(given[i]! - 500);
  });
};

const runOf = async (input: { clientId: string; requestExternalId: string; runId: string }) =>
  (await dynamoRunStore.getRun({ clientId: input.clientId, externalId: input.requestExternalId, runId: input.runId }))!;

const lastLoginOf = async (externalId = accountId) =>
  (await dynamoPortalAccountStore.get(tenant.clientId, externalId))?.lastLogin;

const rawRunItem = async (input: { clientId: string; requestExternalId: string; runId: string }) =>
  (
    await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: rpaRunEntity.key({ clientId: input.clientId, externalId: input.requestExternalId, runId: input.runId }),
      }),
    )
  ).Item;

const objectBytes = async (key: string) => {
  const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucketName(), Key: key }));
  return Buffer.from(await Body!.transformToByteArray());
};

describe('FillPortalForm (view-on-page)', () => {
  it('form_filled: logs in with the decrypted credentials, fills the form, records values and a screenshot', async () => {
    const { input } = await queuedRun('view-on-page');
    const { worker, seen } = testWorker({
      // The page holds the member id as typed, and another last name (truncated, say) than the one typed.
      fill: async (form) => ({
        typed: { memberId: form.patient.memberId, lastName: form.patient.lastName },
        held: { memberId: form.patient.memberId, lastName: 'Exam', extra: 'portal text' },
      }),
    });
    const result = await worker.fillPortalForm(input);
    expect(result).toEqual({ runId: input.runId, status: 'succeeded', outcome: 'form_filled' });

    expect(seen.credentials).toEqual([{ username, password, totpSecret: null }]);
    expect(seen.baseUrls).toEqual(['http://127.0.0.1:9/portal']);
    expect(seen.forms[0]).toMatchObject({ reference: input.requestExternalId, patient: { payerId: PAYER } });
    expect(seen).toMatchObject({ sessionsClosed: 1, browsersReleased: 1 });

    const run = await runOf(input);
    expect(run).toMatchObject({
      status: 'succeeded',
      outcome: 'form_filled',
      portalAccountId: accountId,
      portalId: 'sandbox',
      enteredValues: {
        memberId: { value: 'MBR-0001', readBack: true },
        lastName: { value: 'Example', readBack: false },
      },
    });
    expect(run.steps.find((step) => step.step === 'form filled')?.detail).toBe('2 fields, 1 read back differently');
    expect(run.steps.map((step) => step.step)).toEqual([
      'queued',
      'portal account selected',
      'started',
      'credentials issued',
      'logged in',
      'form filled',
      'form filled; stopped before submitting',
    ]);
    expect(run.steps[3]).toEqual({ at: expect.any(String), step: 'credentials issued', detail: 'attempt 1' });
    const objectKey = keys.rpaScreenshotObject(tenant.clientId, input.runId, 1);
    expect(run.screenshots).toEqual([
      { objectKey, label: 'the filled form, before submitting', capturedAt: expect.any(String) },
    ]);
    expect(await objectBytes(objectKey)).toEqual(png('the filled form, before submitting'));
    expect(await lastLoginOf()).toEqual({ result: 'succeeded', at: expect.any(String) });
    // The run's item holds no secret (the username is the client's to read, but not ours to copy).
    const item = JSON.stringify(await rawRunItem(input));
    expect(item).not.toContain(password);
    expect(item).not.toContain(username);
  });

  it('does the work once: a task delivered again for an ended run returns its outcome and logs in no more', async () => {
    const { input } = await queuedRun('view-on-page');
    const first = testWorker({});
    await first.worker.fillPortalForm(input);
    const again = testWorker({});
    expect(await again.worker.fillPortalForm(input)).toEqual({
      runId: input.runId,
      status: 'succeeded',
      outcome: 'form_filled',
    });
    expect(again.seen.credentials).toEqual([]);
  });

  for (const [outcome, lastLogin] of [
    ['wrong_password', 'failed'],
    ['account_locked', 'locked'],
    ['mfa_required', 'mfa_required'],
  ] as const) {
    it(`${outcome}: a refused login fails the run and is recorded on the account as ${lastLogin}`, async () => {
      const account = await createAccount({ payerIds: [`PAYER-${outcome}`] });
      const { input } = await queuedRun('view-on-page', { account });
      const { worker, seen } = testWorker({ logIn: failure(outcome) });
      expect(await worker.fillPortalForm(input)).toEqual({ runId: input.runId, status: 'failed', outcome });
      expect(await lastLoginOf(account)).toEqual({ result: lastLogin, at: expect.any(String) });
      expect(seen.forms).toEqual([]);
      expect(seen.browsersReleased).toBe(1);
      const run = await runOf(input);
      expect(run.steps.at(-1)).toMatchObject({ detail: outcome });
      expect(JSON.stringify(run)).not.toContain(`test: ${outcome}`);
    });
  }

  it("no_portal_account: the run's account is gone, disabled, on a portal without a driver, or another organization's", async () => {
    const disabled = await createAccount({ status: 'disabled' });
    const noDriver = await createAccount({ portalId: 'availity' });
    const elsewhere = await newTenant('rpa-worker-elsewhere');
    const otherOrganization = uniqueId('acct');
    const res = await call('POST', '/api/external/v1.1/Portals/accounts', {
      apiKey: elsewhere.apiKey,
      body: {
        externalId: otherOrganization,
        clientUserId: elsewhere.clientUserId,
        portalId: 'sandbox',
        payerIds: [PAYER],
        username,
        password,
      },
    });
    expect(res.status).toBe(201);
    for (const account of [disabled, noDriver, otherOrganization, 'no-such-account', null]) {
      const { input } = await queuedRun('view-on-page', { account });
      const { worker, seen } = testWorker({});
      expect(await worker.fillPortalForm(input), String(account)).toEqual({
        runId: input.runId,
        status: 'failed',
        outcome: 'no_portal_account',
      });
      expect(seen.credentials).toEqual([]);
    }
  });

  it('request_not_found: the request was deleted (or never existed)', async () => {
    const { input } = await queuedRun('view-on-page', { externalId: uniqueId('gone') });
    const { worker, seen } = testWorker({});
    expect(await worker.fillPortalForm(input)).toEqual({
      runId: input.runId,
      status: 'failed',
      outcome: 'request_not_found',
    });
    expect(seen.credentials).toEqual([]);
  });

  it('browser_failed: Chromium did not start', async () => {
    const { input } = await queuedRun('view-on-page');
    const { worker, seen } = testWorker(
      {},
      { acquireBrowser: failure('browser_failed') as WorkerDependencies['acquireBrowser'] },
    );
    expect(await worker.fillPortalForm(input)).toEqual({
      runId: input.runId,
      status: 'failed',
      outcome: 'browser_failed',
    });
    expect(seen.credentials).toEqual([]);
  });

  it('credentials_refused: the credentials function refuses the ask, so the worker never logs in', async () => {
    const { input } = await queuedRun('view-on-page');
    const lastLoginBefore = await lastLoginOf();
    // An ask for another attempt than the run's current one, as a confused or hostile worker would make.
    const { worker, seen } = testWorker(
      {},
      { openCredentials: (request) => issueCredentials({ ...request, attempt: request.attempt + 1 }) },
    );
    expect(await worker.fillPortalForm(input)).toEqual({
      runId: input.runId,
      status: 'failed',
      outcome: 'credentials_refused',
    });
    expect(seen.credentials).toEqual([]);
    expect(seen.browsersReleased).toBe(1);
    const run = await runOf(input);
    expect(run.steps.map((step) => step.step)).not.toContain('credentials issued');
    expect(run.steps.at(-1)).toMatchObject({ detail: 'credentials_refused' });
    // No login was tried, so the account's last login is as it was.
    expect(await lastLoginOf()).toEqual(lastLoginBefore);
  });

  it('credentials_refused: a run that no running execution names gets no credentials', async () => {
    const { input } = await queuedRun('view-on-page', { inExecution: false });
    const { worker, seen } = testWorker({});
    expect(await worker.fillPortalForm(input)).toMatchObject({ status: 'failed', outcome: 'credentials_refused' });
    expect(seen.credentials).toEqual([]);
  });

  it('portal_timeout: throws PortalUnavailable for the state machine to retry, then the recorder names it', async () => {
    const { input } = await queuedRun('view-on-page');
    const timingOut = testWorker({ logIn: failure('portal_timeout') });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const error = await timingOut.worker.fillPortalForm(input).catch((caught: Error) => caught);
      expect(error).toBeInstanceOf(PortalUnavailable);
      expect((error as Error).name).toBe('PortalUnavailable');
    }
    expect(timingOut.seen.browsersReleased).toBe(3);
    const running = await runOf(input);
    expect(running.status).toBe('running');
    expect(running.steps.filter((step) => step.step === 'started').map((step) => step.detail)).toEqual([
      'attempt 1',
      'attempt 2',
      'attempt 3',
    ]);
    // Each attempt had the credentials once, for itself.
    expect(running.steps.filter((step) => step.step === 'credentials issued').map((step) => step.detail)).toEqual([
      'attempt 1',
      'attempt 2',
      'attempt 3',
    ]);
    // The Catch passes the error's name (or {Error, Cause}); its Cause is never stored.
    const recorded = await testWorker({}).worker.recordRunFailure({ ...input, error: 'PortalUnavailable' });
    expect(recorded).toEqual({ runId: input.runId, status: 'failed', outcome: 'portal_timeout' });

    const onFill = await queuedRun('view-on-page');
    const slowForm = testWorker({ fill: failure('portal_timeout') });
    await expect(slowForm.worker.fillPortalForm(onFill.input)).rejects.toBeInstanceOf(PortalUnavailable);
    expect(slowForm.seen.sessionsClosed).toBe(1);
  });

  it('bounds every portal call by the time its invocation has left (30 s at most)', async () => {
    for (const [left, expected] of [
      [undefined, 30_000],
      [600_000, 30_000],
      [4_000, 4_000],
      [0, 1],
    ] as const) {
      const { input } = await queuedRun('view-on-page');
      const { worker, seen } = testWorker({});
      await worker.fillPortalForm(input, left === undefined ? undefined : { getRemainingTimeInMillis: () => left });
      expect(seen.timeoutsMs, String(left)).toEqual([expected]);
    }
  });

  it('portal_error: a page the driver did not expect, with a screenshot of it; any other error too', async () => {
    const { input } = await queuedRun('view-on-page');
    const { worker, seen } = testWorker({ fill: failure('portal_error') });
    expect(await worker.fillPortalForm(input)).toEqual({
      runId: input.runId,
      status: 'failed',
      outcome: 'portal_error',
    });
    expect(seen.screenshots).toEqual(['the page when it failed']);
    expect((await runOf(input)).screenshots).toHaveLength(1);

    const crash = await queuedRun('view-on-page');
    const secretMessage = `Error: ${password} at https://portal.example/login?member=MBR-0001`;
    const crashing = testWorker({
      fill: async () => {
        throw new TypeError(secretMessage);
      },
    });
    expect((await crashing.worker.fillPortalForm(crash.input)).outcome).toBe('portal_error');
    expect(crashing.seen).toMatchObject({ sessionsClosed: 1, browsersReleased: 1 });
    expect(JSON.stringify(await rawRunItem(crash.input))).not.toContain(password);
  });

  it('refuses a task for an unknown run, or input without the ids', async () => {
    const { worker } = testWorker({});
    await expect(
      worker.fillPortalForm({ clientId: tenant.clientId, requestExternalId: 'X', runId: uuidv7() }),
    ).rejects.toBeInstanceOf(RunNotFound);
    const { input } = await queuedRun('check-auth-status');
    await expect(worker.fillPortalForm(input)).rejects.toBeInstanceOf(RunNotFound);
    await expect(worker.fillPortalForm({ clientId: tenant.clientId })).rejects.toBeInstanceOf(InvalidTaskInput);
    await expect(worker.fillPortalForm(null)).rejects.toBeInstanceOf(InvalidTaskInput);
  });
});

describe('CheckPortalStatus (a batch item)', () => {
  it('status_read: updates only the request’s authorization (document kept, version bumped)', async () => {
    const { input } = await queuedRun('check-auth-status');
    const before = (await dynamoRequestStore.get(tenant.clientId, input.requestExternalId))!;
    const { worker, seen } = testWorker({
      read: async () => ({ status: 'approved', number: 'AUTH-123', decisionDate: '2026-11-20' }),
    });
    expect(await worker.checkPortalStatus(groupOf([input]))).toEqual(ALL_DONE);
    expect((await runOf(input)).outcome).toBe('status_read');
    expect(seen.statusQueries).toEqual([
      { memberId: 'MBR-0001', requestExternalId: input.requestExternalId, fromDate: '2026-12-01' },
    ]);
    const after = (await dynamoRequestStore.get(tenant.clientId, input.requestExternalId))!;
    expect(after.document).toEqual(before.document);
    expect(after.version).toBe(before.version + 1);
    expect(after.authorization).toEqual({
      channel: 'portal',
      status: 'approved',
      number: 'AUTH-123',
      decisionDate: '2026-11-20',
      lastCheckedAt: expect.any(String),
    });
    expect(after.updatedAt).toBe(after.authorization.lastCheckedAt);
    expect(await runOf(input)).toMatchObject({
      status: 'succeeded',
      outcome: 'status_read',
      authorization: { status: 'approved', number: 'AUTH-123', decisionDate: '2026-11-20' },
      screenshots: [{ label: 'the authorization status' }],
    });
    // Readable through the request API.
    const read = await call('GET', `/api/external/v1.1/Requests/${input.requestExternalId}`, { apiKey: tenant.apiKey });
    expect(read.body.authorization.status).toBe('approved');
  });

  it('status_read: a pended authorization reads as pending; a denial as denied', async () => {
    for (const [portal, stored] of [
      ['pended', 'pending'],
      ['denied', 'denied'],
    ] as const) {
      const { input } = await queuedRun('check-auth-status');
      await testWorker({ read: async () => ({ status: portal }) }).worker.checkPortalStatus(groupOf([input]));
      expect((await dynamoRequestStore.get(tenant.clientId, input.requestExternalId))!.authorization).toEqual({
        channel: 'portal',
        status: stored,
        number: null,
        decisionDate: null,
        lastCheckedAt: expect.any(String),
      });
    }
  });

  it('not_found_on_portal: the run succeeds and the request’s authorization says not_found', async () => {
    const { input } = await queuedRun('check-auth-status');
    const { worker } = testWorker({ read: async () => ({ status: 'not_found' }) });
    expect(await worker.checkPortalStatus(groupOf([input]))).toEqual(ALL_DONE);
    expect(await runOf(input)).toMatchObject({ status: 'succeeded', outcome: 'not_found_on_portal' });
    expect((await dynamoRequestStore.get(tenant.clientId, input.requestExternalId))!.authorization.status).toBe(
      'not_found',
    );
  });
});

describe('one session per portal account (no lockouts)', () => {
  it('a refused login marks the account: later runs end at once without a login, until new credentials clear it', async () => {
    const account = await createAccount();
    const first = await queuedRun('view-on-page', { account });
    const refused = testWorker({ logIn: failure('wrong_password') });
    expect((await refused.worker.fillPortalForm(first.input)).outcome).toBe('wrong_password');
    const marked = await dynamoPortalAccountStore.get(tenant.clientId, account);
    expect(marked?.attention).toEqual({
      reason: 'wrong_password',
      since: expect.any(String),
      runId: first.input.runId,
    });
    const read = await call('GET', `/api/external/v1.1/Portals/accounts/${account}`, { apiKey: tenant.apiKey });
    expect(read.body.attention).toEqual({ reason: 'wrong_password', since: marked!.attention!.since });

    for (let i = 0; i < 3; i++) {
      const later = await queuedRun('view-on-page', { account });
      const { worker, seen } = testWorker({});
      expect((await worker.fillPortalForm(later.input)).outcome).toBe('account_needs_attention');
      expect(seen.credentials).toEqual([]);
    }
    const group = [
      await queuedRun('check-auth-status', { account }),
      await queuedRun('check-auth-status', { account }),
    ];
    const batchWorker = testWorker({});
    expect(
      await batchWorker.worker.checkPortalStatus(
        groupOf(
          group.map((run) => run.input),
          account,
        ),
      ),
    ).toEqual(ALL_DONE);
    for (const { input } of group) expect((await runOf(input)).outcome).toBe('account_needs_attention');
    expect(batchWorker.seen.credentials).toEqual([]);

    const put = await call('PUT', `/api/external/v1.1/Portals/accounts/${account}`, {
      apiKey: tenant.apiKey,
      body: {
        clientUserId: tenant.clientUserId,
        portalId: 'sandbox',
        payerIds: [PAYER],
        username,
        password: `${password}-new`,
      },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.attention).toBeNull();
    const after = await queuedRun('view-on-page', { account });
    const { worker, seen } = testWorker({});
    expect((await worker.fillPortalForm(after.input)).outcome).toBe('form_filled');
    expect(seen.credentials).toEqual([{ username, password: `${password}-new`, totpSecret: null }]);
  });

  it('status set back to active clears the mark too; a PUT that changes neither keeps it', async () => {
    const account = await createAccount();
    const { input } = await queuedRun('view-on-page', { account });
    await testWorker({ logIn: failure('account_locked') }).worker.fillPortalForm(input);
    const body = { clientUserId: tenant.clientUserId, portalId: 'sandbox', payerIds: [PAYER], username };
    const kept = await call('PUT', `/api/external/v1.1/Portals/accounts/${account}`, { apiKey: tenant.apiKey, body });
    expect(kept.body.attention).toMatchObject({ reason: 'account_locked' });
    const cleared = await call('PUT', `/api/external/v1.1/Portals/accounts/${account}`, {
      apiKey: tenant.apiKey,
      body: { ...body, status: 'active' },
    });
    expect(cleared.body.attention).toBeNull();
  });

  it('waits behind another session on the account: PortalAccountBusy, no login, one waiting step', async () => {
    const account = await createAccount();
    const leases = dynamoAccountLeases();
    expect(await leases.acquire(tenant.clientId, account, 'another-session', 60)).toBe(true);
    const { input } = await queuedRun('view-on-page', { account });
    const { worker, seen } = testWorker({});
    for (let attempt = 0; attempt < 3; attempt++) {
      await expect(worker.fillPortalForm(input)).rejects.toBeInstanceOf(PortalAccountBusy);
    }
    expect(seen.credentials).toEqual([]);
    const waiting = await runOf(input);
    expect(waiting.status).toBe('queued');
    expect(waiting.steps.filter((step) => step.step === 'waiting for the portal account')).toHaveLength(1);

    await leases.release(tenant.clientId, account, 'another-session');
    expect((await worker.fillPortalForm(input)).outcome).toBe('form_filled');
    // The worker gave the lease back: another holder takes it at once.
    expect(await leases.acquire(tenant.clientId, account, 'next-session', 60)).toBe(true);
    await leases.release(tenant.clientId, account, 'next-session');

    // Waiting too long: the state machine's Catch names it.
    const late = await queuedRun('view-on-page', { account });
    const recorded = await worker.recordRunFailure({ ...late.input, error: 'PortalAccountBusy' });
    expect(recorded).toMatchObject({ status: 'failed', outcome: 'portal_account_busy' });
  });

  it('a batch group logs in once for all its requests, a bounded number per invocation', async () => {
    const account = await createAccount();
    const runs = [];
    for (let i = 0; i < 5; i++) runs.push(await queuedRun('check-auth-status', { account }));
    const { worker, seen } = testWorker({ read: async () => ({ status: 'pended' }) }, { lookupsPerInvocation: 3 });
    const group = groupOf(
      runs.map((run) => run.input),
      account,
    );
    const first = await worker.checkPortalStatus(group);
    expect(first).toEqual({ remaining: group.items.slice(3), more: true });
    expect(seen.credentials).toHaveLength(1);
    expect(seen.statusQueries).toHaveLength(3);
    expect(await worker.checkPortalStatus({ ...group, items: first.remaining })).toEqual(ALL_DONE);
    expect(seen.credentials).toHaveLength(2);
    expect(seen.statusQueries).toHaveLength(5);
    for (const { input } of runs)
      expect(await runOf(input)).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
    // Delivered again: every run has ended, nothing is looked up and nobody logs in.
    expect(await worker.checkPortalStatus(group)).toEqual(ALL_DONE);
    expect(seen.credentials).toHaveLength(2);
  });

  it("gives each lookup its own deadline within the task's time; one that hangs ends its run alone, the next goes on", async () => {
    const account = await createAccount();
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await queuedRun('check-auth-status', { account }));
    const group = groupOf(
      runs.map((run) => run.input),
      account,
    );
    const hangsSecond = async (n: number): Promise<PortalAuthorization> => {
      if (n === 2) throw new PortalFailure('portal_timeout', 'test: no answer', true);
      return { status: 'pended' };
    };
    const { worker, seen } = testWorker({ read: hangsSecond });
    // 40 s left: less 5 s to close, 35 s for three lookups; a third each, then half, then what is left (30 s at
    // most); of each, the portal's call has all but the 3 s kept for the answer's screenshot.
    expect(await worker.checkPortalStatus(group, { getRemainingTimeInMillis: () => 40_000 })).toEqual(ALL_DONE);
    expectAbout(seen.lookupTimeoutsMs, [11_666 - 3_000, 17_500 - 3_000, 30_000 - 3_000]);
    const [first, hung, after] = await Promise.all(runs.map(({ input }) => runOf(input)));
    expect(first).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
    expect(hung).toMatchObject({ status: 'failed', outcome: 'portal_timeout' });
    // The page it hung on is gone: no screenshot of it; tried once, not retried with the group.
    expect(hung!.screenshots).toEqual([]);
    expect(hung!.steps.filter((step) => step.step === 'started')).toHaveLength(1);
    expect(after).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
    expect(seen.credentials).toHaveLength(1);

    // 14 s left: the first lookup gets the 9 s usable (6 s for the portal's call); no second one starts (it
    // would not get 10 s).
    const more = [];
    for (let i = 0; i < 2; i++) more.push(await queuedRun('check-auth-status', { account }));
    const short = testWorker({});
    const next = groupOf(
      more.map((run) => run.input),
      account,
    );
    expect(await short.worker.checkPortalStatus(next, { getRemainingTimeInMillis: () => 14_000 })).toEqual({
      remaining: next.items.slice(1),
      more: true,
    });
    expectAbout(short.seen.lookupTimeoutsMs, [9_000 - 3_000]);

    // A portal that cannot be reached at all (no hang): the group's attempt is retried, as a login's is.
    const unreachable = await queuedRun('check-auth-status', { account });
    const { worker: down } = testWorker({ read: failure('portal_timeout') });
    await expect(down.checkPortalStatus(groupOf([unreachable.input], account))).rejects.toBeInstanceOf(
      PortalUnavailable,
    );
  });

  it("a group's refused login ends every run of the group with it; its Catch fails the runs still going", async () => {
    const account = await createAccount();
    const runs = [await queuedRun('check-auth-status', { account }), await queuedRun('check-auth-status', { account })];
    const { worker } = testWorker({ logIn: failure('mfa_required') });
    expect(
      await worker.checkPortalStatus(
        groupOf(
          runs.map((run) => run.input),
          account,
        ),
      ),
    ).toEqual(ALL_DONE);
    for (const { input } of runs) expect((await runOf(input)).outcome).toBe('mfa_required');

    const other = await createAccount();
    const pending = [
      await queuedRun('check-auth-status', { account: other }),
      await queuedRun('check-auth-status', { account: other }),
    ];
    const group = groupOf(
      pending.map((run) => run.input),
      other,
    );
    expect(await worker.recordRunFailure({ ...group, error: 'States.Timeout' })).toEqual({
      outcome: 'portal_timeout',
      runs: 2,
    });
    for (const { input } of pending)
      expect(await runOf(input)).toMatchObject({ status: 'failed', outcome: 'portal_timeout' });
  });
});

describe('an attempt that goes on after its task timed out', () => {
  it('leaves the run as the recorder ended it: no screenshot, no step', async () => {
    const { input } = await queuedRun('check-auth-status');
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const late = testWorker({
      read: async () => {
        await answered;
        throw new PortalFailure('portal_timeout', 'test: portal_timeout');
      },
    });
    const attempt = late.worker.checkPortalStatus(groupOf([input]));
    await vi.waitFor(() => expect(late.seen.statusQueries).toHaveLength(1));
    // The Task timed out meanwhile, and its Catch recorded the run.
    await testWorker({}).worker.recordRunFailure({ ...input, error: 'States.Timeout' });
    const ended = await runOf(input);
    expect(ended).toMatchObject({ status: 'failed', outcome: 'portal_timeout' });

    answer();
    await expect(attempt).rejects.toBeInstanceOf(PortalUnavailable);
    expect(await runOf(input)).toEqual(ended);
    expect(late.seen.screenshots).toEqual([]);
    expect(late.seen).toMatchObject({ sessionsClosed: 1, browsersReleased: 1 });
  });
});

describe('RecordRunFailure and FinishBatch', () => {
  it('maps the error name to an outcome, never storing the Cause, and never overwrites an ended run', async () => {
    const { worker } = testWorker({});
    for (const [error, outcome] of [
      ['States.Timeout', 'portal_timeout'],
      [{ Error: 'PortalUnavailable', Cause: '{"errorMessage":"x"}' }, 'portal_timeout'],
      ['Lambda.Unknown', 'portal_error'],
      // Throttled through every retry: the browser function's reserved concurrency stayed used up.
      ['Lambda.TooManyRequestsException', 'browser_busy'],
      [{ Error: 'TypeError', Cause: `{"errorMessage":"${password}"}` }, 'portal_error'],
      [undefined, 'portal_error'],
    ] as const) {
      const { input } = await queuedRun('view-on-page');
      expect(await worker.recordRunFailure({ ...input, error })).toEqual({
        runId: input.runId,
        status: 'failed',
        outcome,
      });
      expect(JSON.stringify(await rawRunItem(input))).not.toContain(password);
    }
    const { input } = await queuedRun('view-on-page');
    await testWorker({}).worker.fillPortalForm(input);
    expect(await worker.recordRunFailure({ ...input, error: 'States.Timeout' })).toEqual({
      runId: input.runId,
      status: 'succeeded',
      outcome: 'form_filled',
    });
    // A run that is gone: nothing to record, and no failure of the recorder either.
    expect(
      await worker.recordRunFailure({ clientId: tenant.clientId, requestExternalId: 'X', runId: uuidv7(), error: 'x' }),
    ).toMatchObject({ status: null, outcome: null });
  });

  it('FinishBatch marks the batch done and fails the runs nobody recorded', async () => {
    const batchId = crypto.randomUUID();
    const done = await queuedRun('check-auth-status', { batchId });
    const lost = await queuedRun('check-auth-status', { batchId });
    await testWorker({ read: async () => ({ status: 'approved' }) }).worker.checkPortalStatus(groupOf([done.input]));
    const at = new Date().toISOString();
    const batch: RpaBatchRecord = {
      clientId: tenant.clientId,
      batchId,
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      items: [done, lost].map(({ input }) => ({ requestExternalId: input.requestExternalId, runId: input.runId })),
      status: 'running',
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    await dynamoRunStore.createBatch(batch);
    const { worker } = testWorker({});
    expect(await worker.finishBatch({ clientId: tenant.clientId, batchId })).toEqual({ batchId, status: 'done' });
    expect(await dynamoRunStore.getBatch(tenant.clientId, batchId)).toMatchObject({
      status: 'done',
      finishedAt: expect.any(String),
      version: 2,
    });
    expect(await runOf(done.input)).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
    expect(await runOf(lost.input)).toMatchObject({ status: 'failed', outcome: 'portal_error' });
    // Twice is once.
    expect(await worker.finishBatch({ clientId: tenant.clientId, batchId })).toEqual({ batchId, status: 'done' });
    expect((await dynamoRunStore.getBatch(tenant.clientId, batchId))!.version).toBe(2);
  });
});

describe('portal secrets sealed before the Encryption SDK (v1) and by it (v2)', () => {
  it('both open in the worker: the same login with either envelope, as the migration leaves items', async () => {
    const v2 = testWorker({});
    const stored = (await dynamoPortalAccountStore.get(tenant.clientId, accountId))!;
    expect(stored.password).toMatchObject({ v: 2, keyring: 'local' });
    await v2.worker.fillPortalForm((await queuedRun('view-on-page')).input);
    expect(v2.seen.credentials).toEqual([{ username, password, totpSecret: null }]);

    // An item written before the migration: v1 envelopes under the stack's own local key.
    const current = (await dynamoPortalAccountStore.get(tenant.clientId, accountId))!;
    const keyFile = localKeyFile(process.env, 'LOCAL_SECRETS_KEY_FILE', 'secrets.key')!;
    const totpSecret = 'JBSWY3DPEHPK3PXP';
    await dynamoPortalAccountStore.update(
      {
        ...current,
        password: sealV1WithLocalKey(keyFile, password, encryptionContextOf(current, 'password')),
        totpSecret: sealV1WithLocalKey(keyFile, totpSecret, encryptionContextOf(current, 'totpSecret')),
        version: current.version + 1,
      },
      current.version,
    );
    expect((await dynamoPortalAccountStore.get(tenant.clientId, accountId))!.password).toMatchObject({ v: 1 });
    const v1 = testWorker({});
    const result = await v1.worker.fillPortalForm((await queuedRun('view-on-page')).input);
    expect(result.outcome).toBe('form_filled');
    expect(v1.seen.credentials).toEqual([{ username, password, totpSecret }]);
  });
});
