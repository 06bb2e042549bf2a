import type { RpaRunRecord } from '#lib/entities/rpa';
import type { SubmittedClaimStore } from '#lib/payer-subscriptions/submitted-claim-store';
import type { RunStartContext } from '#lib/runs/run-context';
import { startQueuedRun } from '#lib/runs/run-start';
import { TIMEOUTS } from '#lib/runs/state-machines';

/**
 * The claim's pointer to its request, written before the run exists: a payer's notification names the claim
 * by this identifier (lib/payer-subscriptions/notification-receipt.ts), whichever attempt of the run sends it.
 */
function recordSubmittedClaim(ctx: { submittedClaims: SubmittedClaimStore }, run: RpaRunRecord) {
  return ctx.submittedClaims.record({
    clientId: run.clientId,
    claimIdentifier: run.submission!.bundleIdentifier,
    externalId: run.externalId,
    organizationId: run.organizationId,
    clientUserId: run.clientUserId,
    payerConnectionId: run.payerConnectionId!,
    version: 1,
    createdAt: run.createdAt,
    updatedAt: run.createdAt,
  });
}

/**
 * Starts a queued `submit` run (a claim, an update or a cancel): its claim's pointer written, admitted against the client's quotas, stored, its SubmitToPayer
 * execution started (a start that fails ends the run and gives the quota back), the execution recorded.
 */
export async function startSubmitRun(
  ctx: Pick<RunStartContext, 'runs' | 'automation' | 'quotas' | 'now'> & { submittedClaims: SubmittedClaimStore },
  run: RpaRunRecord,
): Promise<RpaRunRecord> {
  // Before the admission, which a failed write here would leave taken; a pointer without its run names no one.
  await recordSubmittedClaim(ctx, run);
  return startQueuedRun(ctx, run, 'submit', {}, TIMEOUTS.submitToPayer);
}
