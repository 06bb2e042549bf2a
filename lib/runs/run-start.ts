import { randomUUID } from 'node:crypto';
import type { RecheckThrough } from '#lib/entities/recheck';
import type { StoredRequest } from '#lib/entities/request';
import type { BatchItem, RpaBatchRecord, RpaRunRecord } from '#lib/entities/rpa';
import { Invalid } from '#lib/errors';
import { uuidv7 } from '#lib/ids';
import { clientUserInScope, type Scope } from '#lib/tenancy/scope';
import type { AutomationMachine } from './automation-starter.ts';
import { accountFor, type ChannelChoice, chooseEach } from './channel-choice.ts';
import { type BatchRefusalReason, NoPortalAccount, RequestsNotAutomatable, RequestsNotFound } from './errors.ts';
import { changeBatch, changeRun, withStep } from './run-changes.ts';
import { existingRequest, type RunStartContext } from './run-context.ts';
import { MAX_BATCH_ITEMS } from './run-limits.ts';
import { isTerminal } from './run-store.ts';
import { TIMEOUTS } from './state-machines.ts';

/*
 * Starting the automation: a view-on-page run, or a check-auth-status batch of runs. Each run's channel
 * (portal account or payer connection) is chosen here, the client's automation quota admits it, then the
 * execution starts. A batch is all or nothing unless its body says `partial` (re-checks always do).
 */

/** What a start's body says: on whose behalf, and optionally which portal account. */
export interface StartBody {
  clientUserId: string;
  portalAccountExternalId?: string | undefined;
}

type RunBase = Pick<RpaRunRecord, 'clientId' | 'externalId' | 'kind' | 'clientUserId' | 'organizationId'> & {
  batchId?: string;
};

/**
 * A batch's runs by portal account (one session per group) or by payer connection (one token), in the
 * order they first appear. Every group names both ids, the other channel's as '' (the Map's ItemSelector
 * reads both: lib/runs/state-machines.ts).
 */
const groupsOf = (queued: readonly RpaRunRecord[]) => {
  const groups = new Map<
    string,
    { channel: 'portal' | 'pas'; portalAccountId: string; payerConnectionId: string; items: BatchItem[] }
  >();
  for (const run of queued) {
    const channel = run.channel ?? 'portal';
    const portalAccountId = run.portalAccountId ?? '';
    const payerConnectionId = run.payerConnectionId ?? '';
    const key = `${channel}\n${portalAccountId}\n${payerConnectionId}`;
    const group = groups.get(key) ?? { channel, portalAccountId, payerConnectionId, items: [] };
    group.items.push({ requestExternalId: run.externalId, runId: run.runId });
    groups.set(key, group);
  }
  return [...groups.values()];
};

function queuedRun(ctx: RunStartContext, base: RunBase, choice: ChannelChoice): RpaRunRecord {
  const at = ctx.now().toISOString();
  const queued = withStep([], at, 'queued');
  const through =
    choice.channel === 'portal'
      ? {
          channel: 'portal' as const,
          portalAccountId: choice.account.externalId,
          portalId: choice.account.portalId,
          steps: withStep(
            queued,
            at,
            'portal account selected',
            `${choice.account.portalId} ${choice.account.externalId}`,
          ),
        }
      : {
          channel: 'pas' as const,
          payerConnectionId: choice.connection.externalId,
          steps: withStep(queued, at, 'payer connection selected', choice.connection.externalId),
        };
  return {
    ...base,
    ...through,
    runId: uuidv7(ctx.now().getTime()),
    status: 'queued',
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * StartExecution failed: the run will never be picked up. Fails it (without an outcome: no portal or payer
 * was involved).
 */
function notStarted(ctx: Pick<RunStartContext, 'runs' | 'now'>, run: RpaRunRecord) {
  return changeRun(
    ctx.runs,
    run,
    (current) =>
      isTerminal(current.status)
        ? undefined
        : { ...current, status: 'failed', steps: withStep(current.steps, ctx.now().toISOString(), 'not started') },
    ctx.now,
  );
}

/**
 * Starts a queued run: admitted against the client's quotas for `timeoutSeconds`, stored, its execution of
 * `machine` started with the run's ids and `input` (a start that fails ends the run `not started` and gives
 * the quota back), the execution's ARN recorded. The run, with its ARN.
 */
export async function startQueuedRun(
  ctx: Pick<RunStartContext, 'runs' | 'automation' | 'quotas' | 'now'>,
  run: RpaRunRecord,
  machine: AutomationMachine,
  input: Record<string, string>,
  timeoutSeconds: number,
): Promise<RpaRunRecord> {
  const admitted = await ctx.quotas.admit(run.clientId, run.runId, 1, timeoutSeconds);
  await ctx.runs.createRun(run);
  let executionArn: string;
  try {
    executionArn = await ctx.automation.start(machine, run.runId, {
      clientId: run.clientId,
      requestExternalId: run.externalId,
      runId: run.runId,
      ...input,
    });
  } catch (error) {
    await notStarted(ctx, run);
    await admitted.giveBack();
    throw error;
  }
  // The worker may already be writing the run: set the ARN on whatever version is current.
  const started = await changeRun(ctx.runs, run, (current) => ({ ...current, executionArn }), ctx.now);
  return started ?? { ...run, executionArn };
}

/** Queues a view-on-page run and starts its execution; the run, with its execution's ARN. */
export async function startViewOnPage(
  ctx: RunStartContext,
  scope: Scope,
  externalId: string,
  { clientUserId, portalAccountExternalId }: StartBody,
): Promise<RpaRunRecord> {
  const { clientId } = scope;
  const user = await clientUserInScope(ctx.tenants, scope, clientUserId);
  const request = await existingRequest(ctx, clientId, externalId);
  const account = await accountFor(ctx, user.organizationId, request, portalAccountExternalId);
  const base: RunBase = {
    clientId,
    externalId,
    kind: 'view-on-page',
    clientUserId,
    organizationId: user.organizationId,
  };
  const run = queuedRun(ctx, base, { channel: 'portal', account });
  // The account is fixed here: the credentials function hands out only this account's (run-credentials.ts).
  return startQueuedRun(ctx, run, 'view-on-page', { portalAccountId: account.externalId }, TIMEOUTS.viewOnPage);
}

/** A batch's body: on whose behalf, its requests, and what to do with a request that cannot be started. */
export interface BatchBody extends StartBody {
  requestExternalIds: readonly string[];
  /** Start the requests that can be started and answer the others refused; else one refusal refuses the batch. */
  partial?: boolean | undefined;
  /** A re-check's: the account or connection of the run that read the status, kept while usable (channel-choice.ts). */
  through?: RecheckThrough | undefined;
}

/** A request a batch did not start, and why. */
export interface RefusedRequest {
  requestExternalId: string;
  reason: BatchRefusalReason;
}

/** A started batch, and the requests it left out (only ever some with `partial`). */
export interface StartedBatch {
  batch: RpaBatchRecord;
  refused: RefusedRequest[];
}

/**
 * The requests to start, with their channels, and those refused. All or nothing without `partial`; with it,
 * nothing startable is answered as without it (404 for unknown requests first, then 422), so the flag never
 * turns a refusal into an empty batch.
 */
function startableOrRefused(
  requested: readonly string[],
  missing: readonly string[],
  choices: ReadonlyMap<string, ChannelChoice | NoPortalAccount>,
  partial: boolean,
) {
  const unautomatable = [...choices.values()].filter((choice) => choice instanceof NoPortalAccount);
  const startable = requested.flatMap((externalId) => {
    const choice = choices.get(externalId);
    return choice && !(choice instanceof NoPortalAccount) ? [{ externalId, choice }] : [];
  });
  if (!partial || startable.length === 0) {
    if (missing.length > 0) throw new RequestsNotFound([...missing]);
    if (unautomatable.length > 0) throw new RequestsNotAutomatable(unautomatable);
  }
  const refused = requested.flatMap((requestExternalId): RefusedRequest[] => {
    const choice = choices.get(requestExternalId);
    if (choice === undefined) return [{ requestExternalId, reason: 'request_not_found' }];
    return choice instanceof NoPortalAccount ? [{ requestExternalId, reason: choice.reason }] : [];
  });
  return { startable, refused };
}

/** The batch's runs, queued, each with the channel chosen for its request; the batch itself; the refused. */
async function queuedBatch(
  ctx: RunStartContext,
  scope: Scope,
  body: BatchBody,
): Promise<{ batch: RpaBatchRecord; queued: RpaRunRecord[]; refused: RefusedRequest[] }> {
  const { clientId } = scope;
  const { clientUserId, requestExternalIds } = body;
  const user = await clientUserInScope(ctx.tenants, scope, clientUserId);
  const found = await Promise.all(requestExternalIds.map((externalId) => ctx.requests.get(clientId, externalId)));
  const missing = requestExternalIds.filter((_, i) => !found[i]);
  // Without `partial` an unknown request refuses the batch before any account is read.
  if (missing.length > 0 && !body.partial) throw new RequestsNotFound(missing);
  const present = found.filter((request): request is StoredRequest => request !== undefined);
  const chosen = await chooseEach(ctx, user.organizationId, present, body);
  const choices = new Map(present.map((request, i) => [request.externalId, chosen[i]!]));
  const { startable, refused } = startableOrRefused(requestExternalIds, missing, choices, body.partial === true);
  const batchId = randomUUID();
  const { organizationId } = user;
  const queued = startable.map(({ externalId, choice }) =>
    queuedRun(ctx, { clientId, externalId, kind: 'check-auth-status', batchId, clientUserId, organizationId }, choice),
  );
  const items: BatchItem[] = queued.map((run) => ({ requestExternalId: run.externalId, runId: run.runId }));
  const at = ctx.now().toISOString();
  const batch: RpaBatchRecord = {
    clientId,
    batchId,
    clientUserId,
    organizationId,
    items,
    status: 'running',
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  return { batch, queued, refused };
}

/** Queues one run per request it can start and starts the batch's execution; the batch, and the refused. */
export async function startCheckAuthStatus(ctx: RunStartContext, scope: Scope, body: BatchBody): Promise<StartedBatch> {
  const { clientId } = scope;
  const count = new Set(body.requestExternalIds).size;
  if (count === 0 || count > MAX_BATCH_ITEMS || count !== body.requestExternalIds.length) {
    throw new Invalid(`A batch checks 1 to ${MAX_BATCH_ITEMS} distinct requests.`, { field: 'requestExternalIds' });
  }
  const { batch, queued, refused } = await queuedBatch(ctx, scope, body);
  const { batchId } = batch;
  const admitted = await ctx.quotas.admit(clientId, batchId, queued.length, TIMEOUTS.checkAuthStatus);
  await ctx.runs.createBatch(batch);
  await Promise.all(queued.map((run) => ctx.runs.createRun(run)));
  let executionArn: string;
  try {
    executionArn = await ctx.automation.start('check-auth-status', batchId, {
      clientId,
      batchId,
      groups: groupsOf(queued),
    });
  } catch (error) {
    await Promise.all(queued.map((run) => notStarted(ctx, run)));
    const done = (current: RpaBatchRecord) => ({
      ...current,
      status: 'done' as const,
      finishedAt: ctx.now().toISOString(),
    });
    await changeBatch(ctx.runs, clientId, batchId, done, ctx.now);
    await admitted.giveBack();
    throw error;
  }
  // The execution may already have finished the batch: set the ARN on whatever version is current.
  const started = await changeBatch(ctx.runs, clientId, batchId, (current) => ({ ...current, executionArn }), ctx.now);
  return { batch: started ?? { ...batch, executionArn }, refused };
}
