import type { RunOutcome } from '#lib/entities/rpa';
import { NotFound } from '#lib/errors';
import { log } from '#lib/observability/logger';
import { reaches, type Scope } from '#lib/tenancy/scope';
import type { AutomationStarter } from './automation-starter.ts';
import { outcomeOfExecution } from './execution-ended.ts';
import type { RunReadContext } from './run-context.ts';
import { LOST_AFTER_MS } from './run-limits.ts';
import { isTerminal } from './run-store.ts';
import { type BatchProgress, type RunView, runViewOf } from './run-views.ts';

/*
 * Reading runs and batches. A read also ends what its execution left open (the execution ended, or is
 * gone), so a client never waits on a run nothing will finish (execution-ended.ts).
 */

/**
 * The outcome an execution that ended (or is gone) without recording its runs leaves them with;
 * undefined while it runs, before it started (no ARN yet: StartExecution may be under way), or when
 * it cannot be described now (the stored state is shown then).
 */
async function endedExecutionOutcome(
  ctx: RunReadContext,
  executionArn: string | undefined,
  createdAt: string,
): Promise<RunOutcome | undefined> {
  if (!executionArn) return undefined;
  let execution: Awaited<ReturnType<AutomationStarter['describe']>>;
  try {
    execution = await ctx.automation.describe(executionArn);
  } catch (error) {
    log.warn('The execution could not be described', { errorName: (error as Error).name });
    return undefined;
  }
  if (!execution && ctx.now().getTime() - Date.parse(createdAt) < LOST_AFTER_MS) return undefined;
  return outcomeOfExecution(execution?.status);
}

/**
 * One run of one request. A run its execution left unended (the execution ended, or is gone) is
 * failed now, with the outcome that says how (execution-ended.ts).
 */
export async function getRun(ctx: RunReadContext, scope: Scope, externalId: string, runId: string): Promise<RunView> {
  const { clientId } = scope;
  const ref = { clientId, externalId, runId };
  let run = await ctx.runs.getRun(ref);
  if (!run || !reaches(scope, run.organizationId)) throw new NotFound(`Run ${runId}`);
  const executionArn =
    run.executionArn ?? (run.batchId ? (await ctx.runs.getBatch(clientId, run.batchId))?.executionArn : undefined);
  if (!isTerminal(run.status)) {
    // Every task records its run before it returns: the run is read again after the execution was.
    const outcome = await endedExecutionOutcome(ctx, executionArn, run.createdAt);
    if (outcome) {
      await ctx.ender.endRun(ref, outcome);
      run = (await ctx.runs.getRun(ref)) ?? run;
    }
  }
  return runViewOf(run, executionArn);
}

/**
 * A batch's progress: each item's run, read in one batched read. A batch its execution left open
 * (the execution ended, or is gone) is closed now, its unended runs failed.
 */
export async function batchProgress(ctx: RunReadContext, scope: Scope, batchId: string): Promise<BatchProgress> {
  const { clientId } = scope;
  let batch = await ctx.runs.getBatch(clientId, batchId);
  if (!batch || !reaches(scope, batch.organizationId)) throw new NotFound(`Batch ${batchId}`);
  if (batch.status !== 'done') {
    const outcome = await endedExecutionOutcome(ctx, batch.executionArn, batch.createdAt);
    if (outcome) batch = (await ctx.ender.endBatch(clientId, batchId, outcome)).batch ?? batch;
  }
  const read = await ctx.runs.getRuns(
    clientId,
    batch.items.map(({ requestExternalId, runId }) => ({ externalId: requestExternalId, runId })),
  );
  const byId = new Map(read.map((run) => [run.runId, run]));
  const items = batch.items.map(({ requestExternalId, runId }) => {
    const run = byId.get(runId);
    return {
      requestExternalId,
      runId,
      status: run?.status ?? ('queued' as const),
      outcome: run?.outcome ?? null,
      authorization: run?.authorization ?? null,
    };
  });
  return {
    batchId,
    status: batch.status,
    total: items.length,
    done: items.filter((item) => isTerminal(item.status)).length,
    failed: items.filter((item) => item.status === 'failed').length,
    executionId: batch.executionArn ?? null,
    createdAt: batch.createdAt,
    finishedAt: batch.finishedAt ?? null,
    items,
  };
}
