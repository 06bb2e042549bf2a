import type { RpaRunRecord } from '#lib/entities/rpa';
import { changeRun } from '#lib/runs/run-changes';
import { notStarted } from '#lib/runs/run-start';
import { TIMEOUTS } from '#lib/runs/state-machines';
import type { SubmissionContext } from './submission-start.ts';

/**
 * Starts a queued `submit` run: admitted against the client's quotas, stored, its SubmitToPayer
 * execution started (a start that fails ends the run and gives the quota back), the execution recorded.
 */
export async function startSubmitRun(
  ctx: Pick<SubmissionContext, 'runs' | 'automation' | 'quotas' | 'now'>,
  run: RpaRunRecord,
): Promise<RpaRunRecord> {
  const admitted = await ctx.quotas.admit(run.clientId, run.runId, 1, TIMEOUTS.submitToPayer);
  await ctx.runs.createRun(run);
  let executionArn: string;
  try {
    executionArn = await ctx.automation.start('submit', run.runId, {
      clientId: run.clientId,
      requestExternalId: run.externalId,
      runId: run.runId,
    });
  } catch (error) {
    await notStarted(ctx, run);
    await admitted.giveBack();
    throw error;
  }
  const started = await changeRun(ctx.runs, run, (current) => ({ ...current, executionArn }), ctx.now);
  return started ?? { ...run, executionArn };
}
