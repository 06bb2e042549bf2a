import type { StoredRequest } from '#lib/entities/request';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { existingRequest } from '#lib/runs/run-context';
import { clientUserInScope, type Scope } from '#lib/tenancy/scope';
import { AlreadyCancelled, CancelInProgress, NotSubmitted } from './cancel-errors.ts';
import { cancellableClaim } from './latest-submission.ts';
import { refuseOnPortal } from './portal-refusal.ts';
import { connectionFor, queuedSubmission, type SubmissionContext } from './submission-start.ts';
import { startSubmitRun } from './submit-run-start.ts';

/*
 * Starting a cancel (POST …/Requests/{externalId}/cancel, docs/payer-api.md, "Cancelling"): the claim the
 * payer holds for the request — the latest claim or claim update we sent it — is cancelled by a `submit`
 * run whose submission's action is `cancel` (a PAS Claim with certification type 3 naming that claim);
 * the authorization becomes `cancelled` when the payer confirms it. Refused before anything is sent: a
 * request followed through the portal, one never sent to the payer's API, one cancelled already or
 * whose cancel is under way. The payer connection is chosen as a submission's is.
 */

export interface CancelBody {
  clientUserId: string;
  payerConnectionExternalId?: string | undefined;
}

/** The claim identifier of the latest claim or claim update the payer took or may have taken. */
async function claimToCancel(ctx: SubmissionContext, request: StoredRequest): Promise<string> {
  const { claim, cancelling } = await cancellableClaim(ctx.runs, request.clientId, request.externalId);
  if (cancelling) throw new CancelInProgress(request.externalId, cancelling.runId);
  if (!claim) throw new NotSubmitted(request.externalId);
  return claim.submission!.bundleIdentifier;
}

/** Checks, queues the cancel's run and starts its execution. */
export async function startCancel(
  ctx: SubmissionContext,
  scope: Scope,
  externalId: string,
  { clientUserId, payerConnectionExternalId }: CancelBody,
): Promise<RpaRunRecord> {
  const user = await clientUserInScope(ctx.tenants, scope, clientUserId);
  const request = await existingRequest(ctx, scope.clientId, externalId);
  refuseOnPortal(request, 'cancel');
  if (request.authorization.status === 'cancelled') throw new AlreadyCancelled(externalId);
  const relatedClaimIdentifier = await claimToCancel(ctx, request);
  const { connection } = await connectionFor(ctx, user.organizationId, request, payerConnectionExternalId);
  const queued = queuedSubmission(ctx, request, clientUserId, connection);
  const run: RpaRunRecord = {
    ...queued,
    submission: { ...queued.submission!, action: 'cancel', relatedClaimIdentifier },
  };
  return startSubmitRun(ctx, run);
}
