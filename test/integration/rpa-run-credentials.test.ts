import { randomBytes } from 'node:crypto';
import { InvokeCommand, type InvokeCommandOutput, ResourceNotFoundException } from '@aws-sdk/client-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { lambda } from '#lib/aws/lambda';
import { runCredentialsFunctionName } from '#lib/config';
import type { RunCredentialsRequest } from '#lib/rpa/credentials-source';
import { PortalFailure } from '#lib/rpa/drivers/driver';
import { dynamoRunStore } from '#lib/rpa/dynamo-run-store';
import { lambdaCredentialsSource } from '#lib/rpa/lambda-credentials-source';
import type { RpaRunRecord, RunStep } from '#lib/rpa/run-store';
import { uuidv7 } from '#lib/rpa/runs';
import { call, newTenant, uniqueId } from '#test/support/api';
import { expectNoSecret, rawItems, secretForms, stackOutput } from './rpa-end-to-end-support.ts';
import { newRequest } from './rpa-support.ts';

/*
 * The run credentials function (IssueRunCredentials) invoked as the browser workers invoke it: the
 * real @aws-sdk/client-lambda (the module-scope client of lib/aws/lambda.ts) against the local
 * stack's Lambda stand-in, which runs functions/rpa/issue-run-credentials.ts on the real table and
 * keyring. A live run of the account gets its credentials once per attempt; every other ask is
 * refused by name; the issue is a step on the run; no secret is left in the run or the logs.
 */
type Tenant = Awaited<ReturnType<typeof newTenant>>;

const password = `pw-${randomBytes(12).toString('hex')}`;
const totpSecret = 'KVKFKRCPNZQUYMLX'; // base32, as the API takes it
const username = `desk.${randomBytes(4).toString('hex')}@clinic.example`;

let tenant: Tenant;
let other: Tenant;
let accountId: string;

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
      totpSecret,
      ...change,
    },
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

beforeAll(async () => {
  tenant = await newTenant('run-credentials');
  other = await newTenant('run-credentials-other');
  accountId = await createAccount(tenant);
});

/** A run as the worker leaves it just before it asks: running, attempt `attempts`, the account selected. */
const liveRun = async (change: Partial<RpaRunRecord> = {}, attempts = 1) => {
  const externalId = await newRequest(tenant.apiKey);
  const at = new Date().toISOString();
  const steps: RunStep[] = [{ at, step: 'queued' }];
  for (let n = 1; n <= attempts; n++) {
    steps.push({ at, step: 'started', detail: `attempt ${n}` }, { at, step: 'portal account selected' });
  }
  const run: RpaRunRecord = {
    clientId: tenant.clientId,
    externalId,
    runId: uuidv7(),
    kind: 'view-on-page',
    clientUserId: tenant.clientUserId,
    organizationId: tenant.organizationId,
    portalAccountId: accountId,
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
  const ask: RunCredentialsRequest = {
    clientId: run.clientId,
    requestExternalId: externalId,
    runId: run.runId,
    portalAccountId: run.portalAccountId ?? accountId,
    attempt: attempts,
  };
  return { run, ask };
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

const runOf = (run: RpaRunRecord) => dynamoRunStore.getRun(run);

const issuedSteps = (run: RpaRunRecord | undefined) =>
  (run?.steps ?? []).filter((step) => step.step === 'credentials issued').map((step) => step.detail);

describe('IssueRunCredentials through the Lambda SDK client and the local stand-in', () => {
  it('gives a live run of the account its credentials once, and records the issue on the run', async () => {
    const { run, ask } = await liveRun();
    const output = await invoke(ask);
    expect(output.StatusCode).toBe(200);
    expect(output.FunctionError).toBeUndefined();
    expect(payloadOf(output)).toEqual({ username, password, totpSecret });

    const recorded = (await runOf(run))!;
    expect(recorded.version).toBe(run.version + 1);
    expect(recorded.steps.at(-1)).toEqual({ at: expect.any(String), step: 'credentials issued', detail: 'attempt 1' });
    expect(recorded.status).toBe('running');

    // The same attempt again: refused, and nothing more is recorded.
    await expectRefused(ask, 'already_issued');
    expect(await runOf(run)).toEqual(recorded);
  });

  it('answers the worker port (lambdaCredentialsSource) with the credentials, then refuses it as credentials_refused', async () => {
    const { ask } = await liveRun();
    expect(await lambdaCredentialsSource.issue(ask)).toEqual({ username, password, totpSecret });
    const refused = await lambdaCredentialsSource.issue(ask).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PortalFailure);
    expect(refused).toMatchObject({ outcome: 'credentials_refused' });
    expect((refused as Error).message).toContain('already_issued');
    expect((refused as Error).message).not.toContain(password);
  });

  it('issues once per attempt: a new attempt gets them again, an old or future one does not', async () => {
    const { run, ask } = await liveRun({}, 2);
    await expectRefused({ ...ask, attempt: 1 }, 'not_current_attempt');
    await expectRefused({ ...ask, attempt: 3 }, 'not_current_attempt');
    expect(payloadOf(await invoke(ask))).toMatchObject({ password });
    expect(issuedSteps(await runOf(run))).toEqual(['attempt 2']);
  });

  it('hands them to one of two simultaneous asks for the same attempt (the conditional write decides)', async () => {
    const { run, ask } = await liveRun();
    const outputs = await Promise.all([invoke(ask), invoke(ask), invoke(ask)]);
    const answers = outputs.map(payloadOf);
    expect(answers.filter((answer) => answer.password === password)).toHaveLength(1);
    expect(answers.filter((answer) => answer.errorMessage === 'already_issued')).toHaveLength(2);
    expect(issuedSteps(await runOf(run))).toEqual(['attempt 1']);
  });

  it("refuses another account's id, whether of the organization or of another one", async () => {
    const sibling = await createAccount(tenant, { payerIds: ['OTHER-PAYER'] });
    const { run, ask } = await liveRun();
    await expectRefused({ ...ask, portalAccountId: sibling }, 'other_account');

    // A run that names an account of another organization of the same client (never the worker's choice).
    const organization = await tenant.admin.createOrganization(tenant.clientId, 'another organization');
    const user = `user-${randomBytes(4).toString('hex')}`;
    await tenant.admin.createClientUser(tenant.clientId, organization.organizationId, user);
    const elsewhere = await createAccount({ apiKey: tenant.apiKey, clientUserId: user });
    const crossed = await liveRun({ portalAccountId: elsewhere });
    await expectRefused(crossed.ask, 'other_account');
    expect(issuedSteps(await runOf(run))).toEqual([]);
    expect(issuedSteps(await runOf(crossed.run))).toEqual([]);
  });

  it('refuses an ended run, a missing run, another client’s run, a disabled account and malformed asks', async () => {
    for (const status of ['succeeded', 'failed'] as const) {
      const ended = await liveRun({ status, outcome: status === 'failed' ? 'portal_error' : 'form_filled' });
      await expectRefused(ended.ask, 'run_ended');
    }
    const { ask } = await liveRun();
    await expectRefused({ ...ask, runId: uuidv7() }, 'run_not_found');
    await expectRefused({ ...ask, requestExternalId: uniqueId('gone') }, 'run_not_found');
    // Another client naming this client's run (and its own account of the same id, or this one's).
    const theirs = await createAccount(other);
    await expectRefused({ ...ask, clientId: other.clientId }, 'run_not_found');
    await expectRefused({ ...ask, clientId: other.clientId, portalAccountId: theirs }, 'run_not_found');

    const disabled = await createAccount(tenant, { status: 'disabled' });
    await expectRefused((await liveRun({ portalAccountId: disabled })).ask, 'account_unusable');

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
    // None of them was recorded as an issue.
    const untouched = await dynamoRunStore.getRun({
      clientId: ask.clientId,
      externalId: ask.requestExternalId,
      runId: ask.runId,
    });
    expect(issuedSteps(untouched)).toEqual([]);
  });

  it('answers as Lambda does for a function that does not exist, by name or by ARN', async () => {
    for (const name of ['NoSuchFunction', 'arn:aws:lambda:us-east-1:000000000000:function:NoSuchFunction']) {
      await expect(invoke({}, name)).rejects.toBeInstanceOf(ResourceNotFoundException);
    }
    // The function by its ARN works as by its name.
    const { ask } = await liveRun();
    const byArn = await invoke(ask, `arn:aws:lambda:us-east-1:000000000000:function:${runCredentialsFunctionName()}`);
    expect(payloadOf(byArn)).toMatchObject({ username });
  });

  it('leaves no form of the password or the TOTP secret in the runs, the table or the logs', async () => {
    const needles = [...secretForms(password), ...secretForms(totpSecret, { base32: true })];
    const items = await rawItems([tenant.clientId, other.clientId]);
    const runs = items.filter((item) => String(item.sk).startsWith('RPA#'));
    expect(runs.some((item) => JSON.stringify(item).includes('credentials issued'))).toBe(true);
    for (const item of runs) expectNoSecret(JSON.stringify(item), needles, `item ${item.pk} ${item.sk}`);
    const output = stackOutput();
    // The function logged its issues and refusals (ids and reasons), never a secret.
    expect(output).toContain('"message":"Run credentials issued"');
    expect(output).toContain('"reason":"already_issued"');
    expectNoSecret(output, needles, "the stack's output");
  });
});
