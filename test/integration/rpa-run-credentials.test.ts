import { randomBytes } from 'node:crypto';
import { InvokeCommand, type InvokeCommandOutput, ResourceNotFoundException } from '@aws-sdk/client-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { lambda } from '#lib/aws/lambda';
import { runCredentialsFunctionName } from '#lib/config/resources';
import type { RpaRunRecord, RunStep } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import type { RunCredentialsRequest } from '#lib/portal/credentials-source';
import { PortalFailure } from '#lib/portal/drivers/driver';
import { lambdaCredentialsSource } from '#lib/portal/lambda-credentials-source';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { changeRun, withStep } from '#lib/runs/run-changes';
import type { RunRef } from '#lib/runs/run-store';
import { SANDBOX_HANG_MEMBER_ID, SANDBOX_MEMBERS, SANDBOX_USERS } from '#local/sandbox-portal/seed';
import { call, newTenant, uniqueId } from '#test/support/api';
import {
  createPortalAccount,
  createRequest,
  expectNoSecret,
  locationOf,
  pollUntil,
  rawItems,
  secretForms,
  stackOutput,
  startBatch,
  taskTimeoutSeconds,
} from './rpa-end-to-end-support.ts';
import { newRequest, rpaOf } from './rpa-support.ts';

/*
 * The run credentials function (IssueRunCredentials) invoked as the browser workers invoke it: the
 * real @aws-sdk/client-lambda (the module-scope client of lib/aws/lambda.ts) against the local
 * stack's Lambda stand-in, which runs functions/rpa/issue-run-credentials.ts on the real table,
 * keyring and local Step Functions. The live run is a real one: a check-auth-status batch whose
 * member the sandbox portal never answers for, so its worker logs in (attempt 1) and then waits, its
 * execution running, for the Task's timeout. Every other ask is refused by name; each issue is a step
 * on the run; no secret is left in the runs or the logs.
 */
type Tenant = Awaited<ReturnType<typeof newTenant>>;

const portalUser = SANDBOX_USERS[1]; // the one with a TOTP secret: the answer carries it
const password = `pw-${randomBytes(12).toString('hex')}`; // the other accounts' (never typed anywhere)
const username = `desk.${randomBytes(4).toString('hex')}@clinic.example`;
const PAYER = `E2E-CREDS-${randomBytes(3).toString('hex')}`;

let tenant: Tenant;
let other: Tenant;
/** The live run (in a running execution) and its account. */
let live: { ref: RunRef; accountId: string };

const createAccount = async (owner: { apiKey: string; clientUserId: string }, change: Record<string, unknown> = {}) => {
  const externalId = uniqueId('acct');
  const res = await call('POST', '/api/external/v1.1/Portals/accounts', {
    apiKey: owner.apiKey,
    body: {
      externalId,
      clientUserId: owner.clientUserId,
      portalId: 'sandbox',
      payerIds: ['EHP01'],
      username,
      password,
      ...change,
    },
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

const runOf = (ref: RunRef) => dynamoRunStore.getRun(ref);
const issuedSteps = (run: RpaRunRecord | undefined) =>
  (run?.steps ?? []).filter((step) => step.step === 'credentials issued').map((step) => step.detail);
const askOf = (ref: RunRef, portalAccountId: string, attempt: number): RunCredentialsRequest => ({
  clientId: ref.clientId,
  requestExternalId: ref.externalId,
  runId: ref.runId,
  portalAccountId,
  attempt,
});

beforeAll(async () => {
  tenant = await newTenant('run-credentials');
  other = await newTenant('run-credentials-other');
  const accountId = 'creds-live';
  await createPortalAccount(tenant, { externalId: accountId, payerIds: [PAYER], ...portalUser });
  const member = SANDBOX_MEMBERS.find((candidate) => candidate.memberId === SANDBOX_HANG_MEMBER_ID)!;
  const externalId = await createRequest(tenant, uniqueId('E2E-CREDS'), member, PAYER);
  const started = await startBatch(tenant, [externalId]);
  expect(started.status, started.text).toBe(202);
  const progress = await call('GET', locationOf(started), { apiKey: tenant.apiKey });
  const ref = { clientId: tenant.clientId, externalId, runId: progress.body.items[0].runId as string };
  // Its worker had the credentials of attempt 1 and logged in; the portal now keeps it waiting.
  const run = await pollUntil(
    () => runOf(ref),
    (current) => Boolean(current?.steps.some((step) => step.step === 'logged in')),
    { timeoutMs: (taskTimeoutSeconds - 10) * 1000 },
  );
  expect(run?.steps.map((step) => step.step)).toContain('logged in');
  // The batch ends by itself once the Task times out (taskTimeoutSeconds); the tests that need it live come first.
  live = { ref, accountId };
}, 90_000);

/** The worker's next attempt, as the state machine's retry would start it: a `started` step. */
const nextAttempt = async () => {
  const run = await changeRun(dynamoRunStore, live.ref, (current) => {
    const attempt = current.steps.filter((step) => step.step === 'started').length + 1;
    return { ...current, steps: withStep(current.steps, new Date().toISOString(), 'started', `attempt ${attempt}`) };
  });
  return run!.steps.filter((step) => step.step === 'started').length;
};

/** A run as the worker leaves it just before it asks, written straight to the table: in no execution. */
const forgedRun = async (change: Partial<RpaRunRecord> = {}) => {
  const externalId = await newRequest(tenant.apiKey);
  const at = new Date().toISOString();
  const steps: RunStep[] = [
    { at, step: 'queued' },
    { at, step: 'started', detail: 'attempt 1' },
    { at, step: 'portal account selected' },
  ];
  const run: RpaRunRecord = {
    clientId: tenant.clientId,
    externalId,
    runId: uuidv7(),
    kind: 'view-on-page',
    clientUserId: tenant.clientUserId,
    organizationId: tenant.organizationId,
    portalAccountId: live.accountId,
    portalId: 'sandbox',
    status: 'running',
    steps,
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...change,
  };
  await dynamoRunStore.createRun(run);
  return { run, ask: askOf(run, run.portalAccountId ?? live.accountId, 1) };
};

const invoke = (payload: unknown, functionName = runCredentialsFunctionName()) =>
  lambda.send(
    new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(payload)) }),
  ) as Promise<InvokeCommandOutput>;

const payloadOf = (output: InvokeCommandOutput) => JSON.parse(Buffer.from(output.Payload ?? []).toString('utf8'));

/** The refusal as Lambda reports a function error: 200, `Unhandled`, `{errorType, errorMessage}`. */
const expectRefused = async (payload: unknown, reason: string) => {
  const output = await invoke(payload);
  expect(output.StatusCode).toBe(200);
  expect(output.FunctionError).toBe('Unhandled');
  expect(payloadOf(output)).toEqual({ errorType: 'CredentialsRefused', errorMessage: reason });
};

describe('IssueRunCredentials through the Lambda SDK client and the local stand-in', () => {
  it("gave the live run's worker the credentials once, for attempt 1; the same attempt again is refused", async () => {
    const before = await runOf(live.ref);
    expect(issuedSteps(before)).toEqual(['attempt 1']);
    expect(before?.portalAccountId).toBe(live.accountId);
    await expectRefused(askOf(live.ref, live.accountId, 1), 'already_issued');
    expect(await runOf(live.ref)).toEqual(before);
  });

  it('gives a new attempt of the live run its credentials once, and records the issue on the run', async () => {
    const attempt = await nextAttempt();
    const ask = askOf(live.ref, live.accountId, attempt);
    const output = await invoke(ask);
    expect(output.StatusCode).toBe(200);
    expect(output.FunctionError).toBeUndefined();
    expect(payloadOf(output)).toEqual({
      username: portalUser.username,
      password: portalUser.password,
      totpSecret: portalUser.totpSecret,
    });
    const recorded = (await runOf(live.ref))!;
    expect(recorded.steps.at(-1)).toEqual({
      at: expect.any(String),
      step: 'credentials issued',
      detail: `attempt ${attempt}`,
    });
    await expectRefused(ask, 'already_issued');
    // An earlier attempt, or one not started yet, is refused too.
    await expectRefused({ ...ask, attempt: attempt - 1 }, 'not_current_attempt');
    await expectRefused({ ...ask, attempt: attempt + 1 }, 'not_current_attempt');
    expect(await runOf(live.ref)).toEqual(recorded);
  });

  it('answers the worker port (lambdaCredentialsSource) with them, then refuses it as credentials_refused', async () => {
    const ask = askOf(live.ref, live.accountId, await nextAttempt());
    expect(await lambdaCredentialsSource.issue(ask)).toEqual({
      username: portalUser.username,
      password: portalUser.password,
      totpSecret: portalUser.totpSecret,
    });
    const refused = await lambdaCredentialsSource.issue(ask).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PortalFailure);
    expect(refused).toMatchObject({ outcome: 'credentials_refused' });
    expect((refused as Error).message).toContain('already_issued');
    expect((refused as Error).message).not.toContain(portalUser.password);
  });

  it('hands them to one of three simultaneous asks for one attempt (the conditional write decides)', async () => {
    const ask = askOf(live.ref, live.accountId, await nextAttempt());
    const answers = (await Promise.all([invoke(ask), invoke(ask), invoke(ask)])).map(payloadOf);
    expect(answers.filter((answer) => answer.password === portalUser.password)).toHaveLength(1);
    expect(answers.filter((answer) => answer.errorMessage === 'already_issued')).toHaveLength(2);
    expect(issuedSteps(await runOf(live.ref)).filter((detail) => detail === `attempt ${ask.attempt}`)).toHaveLength(1);
  });

  it('refuses a run no running execution names: written straight to the table, or copied from the live one', async () => {
    expect((await runOf(live.ref))!.status).toBe('running'); // its execution still runs
    // What a worker's stolen role could write: a live-looking run of an account, in no execution.
    const forged = await forgedRun();
    await expectRefused(forged.ask, 'no_live_execution');
    // The live run's ids (run and batch) under another request of the client; another run in its batch:
    // the running execution names neither.
    const batchId = (await runOf(live.ref))!.batchId!;
    const copy = await forgedRun({ runId: live.ref.runId, kind: 'check-auth-status', batchId });
    await expectRefused(copy.ask, 'no_live_execution');
    const withBatch = await forgedRun({ kind: 'check-auth-status', batchId });
    await expectRefused(withBatch.ask, 'no_live_execution');
    for (const { run } of [forged, copy, withBatch]) expect(issuedSteps(await runOf(run))).toEqual([]);
  });

  it("refuses another account's id than the run's, whether of its organization or of another one", async () => {
    const { run } = await forgedRun();
    const sibling = await createAccount(tenant, { payerIds: ['OTHER-PAYER'] });
    await expectRefused(askOf(run, sibling, 1), 'other_account');
    const theirs = await createAccount(other);
    await expectRefused(askOf(run, theirs, 1), 'other_account');
    // A run that names an account of another organization of the same client (never the worker's choice).
    const organization = await tenant.admin.createOrganization(tenant.clientId, 'another organization');
    const user = `user-${randomBytes(4).toString('hex')}`;
    await tenant.admin.createClientUser(tenant.clientId, organization.organizationId, user);
    const elsewhere = await createAccount({ apiKey: tenant.apiKey, clientUserId: user });
    const crossed = await forgedRun({ portalAccountId: elsewhere });
    await expectRefused(crossed.ask, 'other_account');
    for (const checked of [run, crossed.run]) expect(issuedSteps(await runOf(checked))).toEqual([]);
  });

  it('refuses an ended run, a missing run, another client’s run, a disabled account and malformed asks', async () => {
    for (const status of ['succeeded', 'failed'] as const) {
      const ended = await forgedRun({ status, outcome: status === 'failed' ? 'portal_error' : 'form_filled' });
      await expectRefused(ended.ask, 'run_ended');
    }
    const ask = askOf(live.ref, live.accountId, 1);
    await expectRefused({ ...ask, runId: uuidv7() }, 'run_not_found');
    await expectRefused({ ...ask, requestExternalId: uniqueId('gone') }, 'run_not_found');
    // Another client naming this client's live run (with its own account of the same id, or another).
    await expectRefused({ ...ask, clientId: other.clientId }, 'run_not_found');
    await expectRefused(
      { ...ask, clientId: other.clientId, portalAccountId: await createAccount(other) },
      'run_not_found',
    );

    const disabled = await createAccount(tenant, { status: 'disabled' });
    await expectRefused((await forgedRun({ portalAccountId: disabled })).ask, 'account_unusable');

    for (const malformed of [
      {},
      null,
      { ...ask, attempt: '1' },
      { ...ask, attempt: 0 },
      { ...ask, attempt: 1.5 },
      { ...ask, runId: '' },
      { ...ask, clientId: 7 },
      { ...ask, portalAccountId: 'x'.repeat(300) },
    ]) {
      await expectRefused(malformed, 'invalid_input');
    }
  });

  it('answers as Lambda does for a function that does not exist, by name or by ARN', async () => {
    for (const name of ['NoSuchFunction', 'arn:aws:lambda:us-east-1:000000000000:function:NoSuchFunction']) {
      await expect(invoke({}, name)).rejects.toBeInstanceOf(ResourceNotFoundException);
    }
    const byArn = await invoke({}, `arn:aws:lambda:us-east-1:000000000000:function:${runCredentialsFunctionName()}`);
    expect(payloadOf(byArn)).toEqual({ errorType: 'CredentialsRefused', errorMessage: 'invalid_input' });
  });

  it('leaves no form of a password or the TOTP secret in the runs, the table or the logs', async () => {
    const needles = [
      ...secretForms(portalUser.password),
      ...secretForms(password),
      ...secretForms(portalUser.totpSecret, { base32: true }),
    ];
    const items = await rawItems([tenant.clientId, other.clientId]);
    const runs = items.filter((item) => String(item.sk).startsWith('RPA#'));
    expect(runs.some((item) => JSON.stringify(item).includes('credentials issued'))).toBe(true);
    for (const item of items) expectNoSecret(JSON.stringify(item), needles, `item ${item.pk} ${item.sk}`);
    const shown = await call('GET', `${rpaOf(live.ref.externalId)}/runs/${live.ref.runId}`, { apiKey: tenant.apiKey });
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('credentials issued');
    expectNoSecret(shown.text, needles, 'the live run');
    const output = stackOutput();
    // The function logged its issues and refusals (ids and reasons), never a secret.
    expect(output).toContain('"message":"Run credentials issued"');
    expect(output).toContain('"reason":"no_live_execution"');
    expectNoSecret(output, needles, "the stack's output");
  });
});
