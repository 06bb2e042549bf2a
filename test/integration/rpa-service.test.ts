import { beforeAll, describe, expect, it } from 'vitest';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { NotFound, RateLimited } from '#lib/errors';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { payerDirectoryOf } from '#lib/payer-connections/payer-directory';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { isAutomatedPortal } from '#lib/portal/automated-portals';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { dynamoAuthorizationHistoryStore } from '#lib/requests/dynamo-authorization-history-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { automationQuotas } from '#lib/runs/automation-quotas';
import type { AutomationMachine, AutomationStarter, ExecutionStatus } from '#lib/runs/automation-starter';
import { dynamoAutomationUsage } from '#lib/runs/dynamo-automation-usage';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { NoPortalAccount, RequestsNotAutomatable, RequestsNotFound } from '#lib/runs/errors';
import { LOST_AFTER_MS } from '#lib/runs/run-limits';
import { rpaService } from '#lib/runs/runs';
import { s3ScreenshotStorage } from '#lib/runs/s3-screenshot-storage';
import { scraperTokens } from '#lib/runs/scraper-token';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { newTenant } from '#test/support/api';
import { newPortalAccount, newRequest, storedRun } from './rpa-support.ts';

/*
 * The automation's API service on the real table and bucket, with a test double of our own
 * AutomationStarter port in place of Step Functions: what is stored before and after an execution
 * starts, what the execution is given, and how runs and batches read while and after it runs.
 */
class RecordingStarter implements AutomationStarter {
  readonly started: Array<{ machine: AutomationMachine; name: string; input: Record<string, unknown> }> = [];
  readonly statuses = new Map<string, ExecutionStatus>();
  readonly described: string[] = [];
  failStart = false;
  failDescribe = false;

  async start(machine: AutomationMachine, name: string, input: Record<string, unknown>) {
    if (this.failStart) throw new Error('StartExecution refused');
    this.started.push({ machine, name, input });
    const arn = `arn:aws:states:us-east-1:000000000000:execution:${machine}:${name}`;
    this.statuses.set(arn, 'RUNNING');
    return arn;
  }

  async describe(executionArn: string) {
    this.described.push(executionArn);
    if (this.failDescribe) throw new Error('DescribeExecution unavailable');
    const status = this.statuses.get(executionArn);
    return status ? { status } : undefined;
  }
}

let tenant: Awaited<ReturnType<typeof newTenant>>;
let accountId: string;
beforeAll(async () => {
  tenant = await newTenant('rpa-service');
  accountId = await newPortalAccount(tenant);
});

const serviceDeps = (automation: AutomationStarter, now?: () => Date) => ({
  ...(now ? { now } : {}),
  runs: dynamoRunStore,
  requests: dynamoRequestStore,
  accounts: dynamoPortalAccountStore,
  automated: isAutomatedPortal,
  payers: payerDirectoryOf(dynamoPayerEndpointStore, dynamoPayerConnectionStore),
  attachments: dynamoAttachmentStore,
  tenants: dynamoTenantStore,
  automation,
  quotas: automationQuotas({ usage: dynamoAutomationUsage, tenants: dynamoTenantStore }),
  screenshots: s3ScreenshotStorage,
  history: dynamoAuthorizationHistoryStore,
  tokens: scraperTokens(async () => [Buffer.alloc(32, 1)]),
});
const serviceWith = (automation: AutomationStarter, now?: () => Date) => rpaService(serviceDeps(automation, now));

describe('view-on-page', () => {
  it('queues a run, then starts its execution named after it with ids only', async () => {
    const starter = new RecordingStarter();
    const rpa = serviceWith(starter);
    const externalId = await newRequest(tenant.apiKey);
    const run = await rpa.startViewOnPage({ clientId: tenant.clientId }, externalId, {
      clientUserId: tenant.clientUserId,
    });

    expect(starter.started).toEqual([
      {
        machine: 'view-on-page',
        name: run.runId,
        input: {
          clientId: tenant.clientId,
          requestExternalId: externalId,
          runId: run.runId,
          portalAccountId: accountId,
        },
      },
    ]);
    expect(run.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const stored = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
    expect(stored).toMatchObject({
      kind: 'view-on-page',
      status: 'queued',
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      executionArn: `arn:aws:states:us-east-1:000000000000:execution:view-on-page:${run.runId}`,
      version: 2,
    });
    expect(await rpa.getRun({ clientId: tenant.clientId }, externalId, run.runId)).toMatchObject({
      runId: run.runId,
      status: 'queued',
      outcome: null,
      executionId: stored!.executionArn,
    });
  });

  it('refuses an unknown client user or request before storing anything', async () => {
    const starter = new RecordingStarter();
    const rpa = serviceWith(starter);
    const externalId = await newRequest(tenant.apiKey);
    await expect(
      rpa.startViewOnPage({ clientId: tenant.clientId }, externalId, { clientUserId: 'nobody' }),
    ).rejects.toThrow(NotFound);
    await expect(
      rpa.startViewOnPage({ clientId: tenant.clientId }, 'NOPE', { clientUserId: tenant.clientUserId }),
    ).rejects.toThrow(NotFound);
    expect(starter.started).toEqual([]);
    expect(await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10)).toEqual([]);
  });

  it('fails the run when its execution cannot be started, and says so', async () => {
    const starter = new RecordingStarter();
    starter.failStart = true;
    const externalId = await newRequest(tenant.apiKey);
    await expect(
      serviceWith(starter).startViewOnPage({ clientId: tenant.clientId }, externalId, {
        clientUserId: tenant.clientUserId,
      }),
    ).rejects.toThrow('StartExecution refused');
    const [run] = await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);
    expect(run).toMatchObject({
      status: 'failed',
      steps: [{ step: 'queued' }, { step: 'portal account selected' }, { step: 'not started' }],
    });
    expect(run?.outcome).toBeUndefined();
  });

  it('fails a run its execution ended without recording, in the table, with the outcome that says how', async () => {
    const starter = new RecordingStarter();
    const rpa = serviceWith(starter);
    for (const [status, outcome] of [
      ['TIMED_OUT', 'execution_timed_out'],
      ['ABORTED', 'execution_aborted'],
      ['FAILED', 'execution_lost'],
    ] as const) {
      const externalId = await newRequest(tenant.apiKey);
      const run = await rpa.startViewOnPage({ clientId: tenant.clientId }, externalId, {
        clientUserId: tenant.clientUserId,
      });
      starter.statuses.set(run.executionArn!, status);
      expect(await rpa.getRun({ clientId: tenant.clientId }, externalId, run.runId)).toMatchObject({
        status: 'failed',
        outcome,
      });
      const stored = await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId });
      expect(stored).toMatchObject({ status: 'failed', outcome, version: 3 });
      expect(stored?.steps.at(-1)).toMatchObject({ detail: outcome });
    }
    // An execution that cannot be described: the stored state is shown, and stays stored.
    const externalId = await newRequest(tenant.apiKey);
    const run = await rpa.startViewOnPage({ clientId: tenant.clientId }, externalId, {
      clientUserId: tenant.clientUserId,
    });
    starter.statuses.set(run.executionArn!, 'TIMED_OUT');
    starter.failDescribe = true;
    expect(await rpa.getRun({ clientId: tenant.clientId }, externalId, run.runId)).toMatchObject({ status: 'queued' });
    expect(await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId })).toMatchObject({
      status: 'queued',
      version: 2,
    });
  });

  it('never overwrites a run that ended, whatever its execution says', async () => {
    const starter = new RecordingStarter();
    const rpa = serviceWith(starter);
    const externalId = await newRequest(tenant.apiKey);
    const run = await rpa.startViewOnPage({ clientId: tenant.clientId }, externalId, {
      clientUserId: tenant.clientUserId,
    });
    const ref = { clientId: tenant.clientId, externalId, runId: run.runId };
    const stored = (await dynamoRunStore.getRun(ref))!;
    await dynamoRunStore.updateRun({ ...stored, status: 'failed', outcome: 'wrong_password', version: 3 });
    starter.statuses.set(run.executionArn!, 'FAILED');
    expect(await rpa.getRun({ clientId: tenant.clientId }, externalId, run.runId)).toMatchObject({
      status: 'failed',
      outcome: 'wrong_password',
    });
    expect(await dynamoRunStore.getRun(ref)).toMatchObject({ outcome: 'wrong_password', version: 3 });
  });

  it('fails a run whose execution does not exist as lost, once it is old enough to have been seen', async () => {
    const starter = new RecordingStarter();
    let clock = new Date();
    const rpa = serviceWith(starter, () => clock);
    const externalId = await newRequest(tenant.apiKey);
    const run = await rpa.startViewOnPage({ clientId: tenant.clientId }, externalId, {
      clientUserId: tenant.clientUserId,
    });
    starter.statuses.delete(run.executionArn!);
    // Just started: DescribeExecution may not see it yet.
    clock = new Date(clock.getTime() + LOST_AFTER_MS - 1_000);
    expect(await rpa.getRun({ clientId: tenant.clientId }, externalId, run.runId)).toMatchObject({ status: 'queued' });
    clock = new Date(clock.getTime() + 2_000);
    expect(await rpa.getRun({ clientId: tenant.clientId }, externalId, run.runId)).toMatchObject({
      status: 'failed',
      outcome: 'execution_lost',
    });
    expect(await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId, runId: run.runId })).toMatchObject({
      status: 'failed',
      outcome: 'execution_lost',
    });
  });

  it('leaves a run whose execution has not started yet (no ARN) as it is', async () => {
    const starter = new RecordingStarter();
    const rpa = serviceWith(starter, () => new Date(Date.now() + 10 * LOST_AFTER_MS));
    const externalId = await newRequest(tenant.apiKey);
    const run = await storedRun(tenant, externalId, { status: 'queued', outcome: undefined, steps: [] });
    expect(await rpa.getRun({ clientId: tenant.clientId }, externalId, run.runId)).toMatchObject({
      status: 'queued',
      executionId: null,
    });
    expect(starter.described).toEqual([]);
  });
});

describe('check-auth-status batches', () => {
  it('queues one run per request and starts one execution for the batch with ids only', async () => {
    const starter = new RecordingStarter();
    const rpa = serviceWith(starter);
    const ids = [await newRequest(tenant.apiKey), await newRequest(tenant.apiKey), await newRequest(tenant.apiKey)];
    const { batch } = await rpa.startCheckAuthStatus(
      { clientId: tenant.clientId },
      { clientUserId: tenant.clientUserId, requestExternalIds: ids },
    );

    expect(batch.items.map((item) => item.requestExternalId)).toEqual(ids);
    expect(starter.started).toEqual([
      {
        machine: 'check-auth-status',
        name: batch.batchId,
        input: {
          clientId: tenant.clientId,
          batchId: batch.batchId,
          groups: [{ channel: 'portal', portalAccountId: accountId, payerConnectionId: '', items: batch.items }],
        },
      },
    ]);
    expect(await dynamoRunStore.getBatch(tenant.clientId, batch.batchId)).toMatchObject({
      status: 'running',
      executionArn: batch.executionArn,
      items: batch.items,
    });
    for (const { requestExternalId, runId } of batch.items) {
      expect(
        await dynamoRunStore.getRun({ clientId: tenant.clientId, externalId: requestExternalId, runId }),
      ).toMatchObject({ kind: 'check-auth-status', batchId: batch.batchId, status: 'queued' });
    }

    const progress = await rpa.batchProgress({ clientId: tenant.clientId }, batch.batchId);
    expect(progress).toMatchObject({ batchId: batch.batchId, status: 'running', total: 3, done: 0, failed: 0 });
    expect(progress.items).toEqual(
      batch.items.map((item) => ({ ...item, status: 'queued', outcome: null, authorization: null })),
    );
    // A batch run reads with the batch's execution.
    const [first] = batch.items;
    expect(await rpa.getRun({ clientId: tenant.clientId }, first!.requestExternalId, first!.runId)).toMatchObject({
      batchId: batch.batchId,
      executionId: batch.executionArn,
    });
  });

  it('counts what the runs say, and the whole batch once its execution ended', async () => {
    const starter = new RecordingStarter();
    const rpa = serviceWith(starter);
    const ids = [await newRequest(tenant.apiKey), await newRequest(tenant.apiKey)];
    const { batch } = await rpa.startCheckAuthStatus(
      { clientId: tenant.clientId },
      { clientUserId: tenant.clientUserId, requestExternalIds: ids },
    );
    const [checked] = batch.items;
    const ref = { clientId: tenant.clientId, externalId: checked!.requestExternalId, runId: checked!.runId };
    const run = (await dynamoRunStore.getRun(ref))!;
    await dynamoRunStore.updateRun({
      ...run,
      status: 'succeeded',
      outcome: 'status_read',
      authorization: { status: 'approved', number: 'A-1', decisionDate: null },
      version: run.version + 1,
    });
    expect(await rpa.batchProgress({ clientId: tenant.clientId }, batch.batchId)).toMatchObject({
      status: 'running',
      done: 1,
      failed: 0,
      items: [
        { status: 'succeeded', outcome: 'status_read', authorization: { status: 'approved', number: 'A-1' } },
        { status: 'queued' },
      ],
    });
    starter.statuses.set(batch.executionArn!, 'TIMED_OUT');
    const progress = await rpa.batchProgress({ clientId: tenant.clientId }, batch.batchId);
    expect(progress).toMatchObject({
      status: 'done',
      total: 2,
      done: 2,
      failed: 1,
      finishedAt: expect.any(String),
      items: [
        { status: 'succeeded', outcome: 'status_read' },
        { status: 'failed', outcome: 'execution_timed_out' },
      ],
    });
    // Recorded, not only shown: the batch is closed and its unended run failed in the table.
    expect(await dynamoRunStore.getBatch(tenant.clientId, batch.batchId)).toMatchObject({
      status: 'done',
      finishedAt: progress.finishedAt,
    });
    const [, timedOut] = batch.items;
    expect(
      await dynamoRunStore.getRun({
        clientId: tenant.clientId,
        externalId: timedOut!.requestExternalId,
        runId: timedOut!.runId,
      }),
    ).toMatchObject({ status: 'failed', outcome: 'execution_timed_out' });
    expect(await dynamoRunStore.getRun(ref)).toMatchObject({ status: 'succeeded', outcome: 'status_read' });
  });

  it('refuses unknown requests, naming every one, before storing anything', async () => {
    const starter = new RecordingStarter();
    const known = await newRequest(tenant.apiKey);
    const error = await serviceWith(starter)
      .startCheckAuthStatus(
        { clientId: tenant.clientId },
        { clientUserId: tenant.clientUserId, requestExternalIds: [known, 'NOPE-A', 'NOPE-B'] },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestsNotFound);
    expect((error as RequestsNotFound).requestExternalIds).toEqual(['NOPE-A', 'NOPE-B']);
    expect(starter.started).toEqual([]);
    expect(await dynamoRunStore.latestRuns(tenant.clientId, known, 10)).toEqual([]);
  });

  it('bounds a batch to 25 distinct requests', async () => {
    const rpa = serviceWith(new RecordingStarter());
    const many = Array.from({ length: 26 }, (_, i) => `R-${i}`);
    await expect(
      rpa.startCheckAuthStatus(
        { clientId: tenant.clientId },
        { clientUserId: tenant.clientUserId, requestExternalIds: many },
      ),
    ).rejects.toThrow(/1 to 25/);
    await expect(
      rpa.startCheckAuthStatus(
        { clientId: tenant.clientId },
        { clientUserId: tenant.clientUserId, requestExternalIds: ['A', 'A'] },
      ),
    ).rejects.toThrow(/distinct/);
    await expect(
      rpa.startCheckAuthStatus(
        { clientId: tenant.clientId },
        { clientUserId: tenant.clientUserId, requestExternalIds: [] },
      ),
    ).rejects.toThrow(/1 to 25/);
  });

  it('fails the runs and closes the batch when its execution cannot be started', async () => {
    const starter = new RecordingStarter();
    starter.failStart = true;
    const externalId = await newRequest(tenant.apiKey);
    await expect(
      serviceWith(starter).startCheckAuthStatus(
        { clientId: tenant.clientId },
        { clientUserId: tenant.clientUserId, requestExternalIds: [externalId] },
      ),
    ).rejects.toThrow('StartExecution refused');
    const [run] = await dynamoRunStore.latestRuns(tenant.clientId, externalId, 10);
    expect(run).toMatchObject({ status: 'failed' });
    expect(await dynamoRunStore.getBatch(tenant.clientId, run!.batchId!)).toMatchObject({ status: 'done' });
  });
});

describe('scraper session', () => {
  it("issues tokens only for the caller's users and requests, and opens the session they grant", async () => {
    const rpa = serviceWith(new RecordingStarter());
    const externalId = await newRequest(tenant.apiKey);
    await storedRun(tenant, externalId);
    const caller = { clientId: tenant.clientId, keyId: tenant.keyId };
    await expect(rpa.issueAccessToken(caller, externalId, 'nobody')).rejects.toThrow(NotFound);
    await expect(rpa.issueAccessToken(caller, 'NOPE', tenant.clientUserId)).rejects.toThrow(NotFound);
    const { accessToken } = await rpa.issueAccessToken(caller, externalId, tenant.clientUserId);
    const claims = await rpa.verifyAccessToken(accessToken, externalId);
    const session = await rpa.session(claims);
    expect(session.runs).toHaveLength(1);
    expect(session.runs[0]!.screenshots[0]!.url).toMatch(/^http/);
  });
});

describe('choosing the portal account at the start', () => {
  const scopeOf = (t: { clientId: string }) => ({ clientId: t.clientId });
  const chosen = async (t: Awaited<ReturnType<typeof newTenant>>, externalId: string, named?: string) => {
    const run = await serviceWith(new RecordingStarter()).startViewOnPage(scopeOf(t), externalId, {
      clientUserId: t.clientUserId,
      ...(named ? { portalAccountExternalId: named } : {}),
    });
    return run.portalAccountId;
  };
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(NoPortalAccount);
    return (error as NoPortalAccount).reason;
  };

  it("takes the named account, else the payer's oldest active one, else the organization's only one", async () => {
    const t = await newTenant('choice');
    const only = await newPortalAccount(t, { payerIds: ['OTHER-PAYER'] });
    const noPayer = await newRequest(t.apiKey, { PayerId: undefined, Payer: undefined });
    const withPayer = await newRequest(t.apiKey, { PayerId: 'SANDBOX' });
    expect(await chosen(t, noPayer)).toBe(only);
    expect(await chosen(t, withPayer)).toBe(only);

    const serving = await newPortalAccount(t, { payerIds: ['SANDBOX'] });
    await newPortalAccount(t, { payerIds: ['SANDBOX'] });
    expect(await chosen(t, withPayer)).toBe(serving);
    expect(await chosen(t, withPayer, only)).toBe(only);
    expect(await refusal(chosen(t, noPayer))).toBe('no_payer_and_several_accounts');
    const otherPayer = await newRequest(t.apiKey, { PayerId: 'NOBODY-SERVES-IT' });
    expect(await refusal(chosen(t, otherPayer))).toBe('no_payer_match_several_accounts');
    expect(await dynamoRunStore.latestRuns(t.clientId, otherPayer, 10)).toEqual([]);
  });

  it("refuses a named account that is disabled, unknown or another organization's, and an organization without one", async () => {
    const t = await newTenant('choice-refused');
    const request = await newRequest(t.apiKey);
    expect(await refusal(chosen(t, request))).toBe('no_active_account');

    const disabled = await newPortalAccount(t);
    const account = await dynamoPortalAccountStore.get(t.clientId, disabled);
    await dynamoPortalAccountStore.update(
      { ...account!, status: 'disabled', version: account!.version + 1 },
      account!.version,
    );
    expect(await refusal(chosen(t, request, disabled))).toBe('named_disabled');
    expect(await refusal(chosen(t, request))).toBe('no_active_account');

    await expect(chosen(t, request, 'no-such-account')).rejects.toThrow(NotFound);
    const { organizationId: other } = await t.admin.createOrganization(t.clientId, 'Other organization');
    await t.admin.createClientUser(t.clientId, other, `${t.clientUserId}-other`);
    const elsewhere = await newPortalAccount({ apiKey: t.apiKey, clientUserId: `${t.clientUserId}-other` });
    await expect(chosen(t, request, elsewhere)).rejects.toThrow(NotFound);
    expect(await dynamoRunStore.latestRuns(t.clientId, request, 10)).toEqual([]);
  });

  it("groups a batch's requests by their account, in the order the accounts first appear", async () => {
    const t = await newTenant('choice-groups');
    const first = await newPortalAccount(t, { payerIds: ['PAYER-A'] });
    const second = await newPortalAccount(t, { payerIds: ['PAYER-B'] });
    const ids = [
      await newRequest(t.apiKey, { PayerId: 'PAYER-B' }),
      await newRequest(t.apiKey, { PayerId: 'PAYER-A' }),
      await newRequest(t.apiKey, { PayerId: 'PAYER-B' }),
    ];
    const starter = new RecordingStarter();
    const { batch } = await serviceWith(starter).startCheckAuthStatus(scopeOf(t), {
      clientUserId: t.clientUserId,
      requestExternalIds: ids,
    });
    const [a, b, c] = batch.items;
    expect(starter.started[0]?.input.groups).toEqual([
      { channel: 'portal', portalAccountId: second, payerConnectionId: '', items: [a, c] },
      { channel: 'portal', portalAccountId: first, payerConnectionId: '', items: [b] },
    ]);
  });

  it('refuses a batch naming every request no account can be chosen for, and starts nothing', async () => {
    const t = await newTenant('choice-batch');
    await newPortalAccount(t, { payerIds: ['SANDBOX'] });
    await newPortalAccount(t, { payerIds: ['SANDBOX'] });
    const served = await newRequest(t.apiKey, { PayerId: 'SANDBOX' });
    const a = await newRequest(t.apiKey, { PayerId: 'UNSERVED' });
    const b = await newRequest(t.apiKey, { PayerId: 'UNSERVED' });
    const starter = new RecordingStarter();
    const error = await serviceWith(starter)
      .startCheckAuthStatus(scopeOf(t), { clientUserId: t.clientUserId, requestExternalIds: [served, a, b] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestsNotAutomatable);
    expect((error as RequestsNotAutomatable).details).toEqual({
      requests: [
        { requestExternalId: a, reason: 'no_payer_match_several_accounts' },
        { requestExternalId: b, reason: 'no_payer_match_several_accounts' },
      ],
    });
    expect(starter.started).toEqual([]);
    expect(await dynamoRunStore.latestRuns(t.clientId, served, 10)).toEqual([]);
  });
});

describe('automation quotas at the start', () => {
  const scopeOf = (t: { clientId: string }) => ({ clientId: t.clientId });
  const quotasWith = (clock: () => Date) =>
    automationQuotas({ usage: dynamoAutomationUsage, tenants: dynamoTenantStore, now: clock });

  it('refuses runs past the hour with 429 and Retry-After to the next hour; a failed start gives its count back', async () => {
    const t = await newTenant('quota-hour');
    await newPortalAccount(t);
    await t.admin.setAutomationQuotas(t.clientId, { automationRunsPerHour: 3, automationRunsInFlight: 100 });
    const at = new Date('2026-11-24T17:40:00Z');
    const rpa = rpaService({ ...serviceDeps(new RecordingStarter()), quotas: quotasWith(() => at) });
    const failing = new RecordingStarter();
    failing.failStart = true;
    const notStarting = rpaService({ ...serviceDeps(failing), quotas: quotasWith(() => at) });
    const body = { clientUserId: t.clientUserId };
    await expect(notStarting.startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body)).rejects.toThrow();
    await rpa.startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body);
    const { batch } = await rpa.startCheckAuthStatus(scopeOf(t), {
      ...body,
      requestExternalIds: [await newRequest(t.apiKey), await newRequest(t.apiKey)],
    });
    expect(batch.items).toHaveLength(2);
    const refused = await rpa
      .startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RateLimited);
    expect(refused).toMatchObject({ retryAfterSeconds: 20 * 60, details: { quota: 'runsPerHour', limit: 3 } });
    // The next hour counts afresh.
    const later = rpaService({
      ...serviceDeps(new RecordingStarter()),
      quotas: quotasWith(() => new Date('2026-11-24T18:00:01Z')),
    });
    await expect(later.startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body)).resolves.toBeDefined();
  });

  it('refuses runs past the in-flight bound until one lands; the day bound likewise', async () => {
    const t = await newTenant('quota-flight');
    await newPortalAccount(t);
    await t.admin.setAutomationQuotas(t.clientId, { automationRunsInFlight: 2, automationRunsPerDay: 3 });
    const quotas = quotasWith(() => new Date());
    const rpa = rpaService({ ...serviceDeps(new RecordingStarter()), quotas });
    const body = { clientUserId: t.clientUserId };
    const first = await rpa.startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body);
    const second = await rpa.startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body);
    const refused = await rpa
      .startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body)
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ retryAfterSeconds: 30, details: { quota: 'runsInFlight', limit: 2 } });
    await quotas.landed(t.clientId, first.runId);
    const third = await rpa.startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body);
    for (const run of [second, third]) await quotas.landed(t.clientId, run.runId);
    // Nothing in flight, three started today: the day's bound refuses the fourth until midnight UTC.
    const day = await rpa
      .startViewOnPage(scopeOf(t), await newRequest(t.apiKey), body)
      .catch((error: unknown) => error);
    expect(day).toMatchObject({ details: { quota: 'runsPerDay', limit: 3 } });
    expect((day as RateLimited).retryAfterSeconds).toBeGreaterThan(0);
  });
});
