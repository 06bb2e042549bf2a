import { changedByRun } from '#lib/entities/authorization-history';
import type { Authorization } from '#lib/entities/request';
import type { PortalAuthorizationRecord, RpaRunRecord, RunOutcome } from '#lib/entities/rpa';
import { log } from '#lib/observability/logger';
import { type RecheckContext, setAuthorization } from '#lib/requests/authorization-changes';
import type { TaskResult } from '#lib/runs/run-recorder';
import type { RunRef } from '#lib/runs/run-store';
import type { PayerDecision } from './pas/answer-model.ts';
import type { PayerTaskContext } from './payer-task-context.ts';

/*
 * Where a PAS answer becomes a status: the payer's decision, read per item (pas/), written to the
 * request's authorization through the same transaction, history entry, outbox event and webhook as a
 * portal read (lib/requests/authorization-changes.ts), then the run ends with its outcome.
 */

/** The run's own summary of the decision, in the words its schema has (the portal's `pended`). */
const runSummaryOf = (decision: PayerDecision): PortalAuthorizationRecord | undefined => {
  const status = decision.status === 'pending' ? 'pended' : decision.status;
  if (status === 'cancelled' || status === 'not_submitted') return undefined;
  return { status, number: decision.number, decisionDate: decision.decisionDate };
};

/** Who a re-check of what `run` read runs for: its client user, organization and payer connection. */
function rechecksFor(ctx: PayerTaskContext, run: RpaRunRecord): RecheckContext | undefined {
  return ctx.recheckSettings && run.payerConnectionId
    ? {
        settingsOf: ctx.recheckSettings,
        onBehalfOf: {
          clientUserId: run.clientUserId,
          organizationId: run.organizationId,
          channel: 'pas',
          payerConnectionId: run.payerConnectionId,
        },
      }
    : undefined;
}

/**
 * Writes the decision on the request and ends the run with `outcome`; `request_not_found` if it is gone.
 * A submission gives the decision deadline it starts (`decisionDueAt`, null: none); a status read gives
 * none, and the request keeps the one it has.
 */
export async function recordDecision(
  ctx: PayerTaskContext,
  ref: RunRef,
  run: RpaRunRecord,
  decision: PayerDecision,
  outcome: Extract<RunOutcome, 'submitted' | 'status_read'>,
  decisionDueAt?: string | null,
): Promise<TaskResult> {
  const at = ctx.now().toISOString();
  const next: Authorization = {
    status: decision.status,
    number: decision.number,
    decisionDate: decision.decisionDate,
    lastCheckedAt: at,
    channel: 'pas',
    items: decision.items,
    reasons: decision.reasons,
    // A request read again keeps when it was first read (lib/requests/information-requests.ts).
    informationRequested: decision.informationRequested && { requestedAt: at, ...decision.informationRequested },
    ...(decisionDueAt !== undefined ? { decisionDueAt } : {}),
  };
  const updated = await setAuthorization(ctx.requests, ref, next, changedByRun(run), at, rechecksFor(ctx, run));
  const summary = runSummaryOf(decision);
  const change = summary ? { authorization: summary } : {};
  if (!updated) return ctx.finish(ref, 'request_not_found', change);
  const finished = await ctx.finish(ref, outcome, change);
  if (decision.status === 'pending') await subscribeAfterPended(ctx, ref, run);
  return finished;
}

/**
 * A pended answer subscribes its connection to the payer's notifications (one subscription per
 * connection), after the run ended: a subscription that cannot be made changes nothing for the run, and
 * the re-checks read the decision as they would without one.
 */
async function subscribeAfterPended(ctx: PayerTaskContext, ref: RunRef, run: RpaRunRecord) {
  const { payerConnectionId } = run;
  if (!ctx.subscribe || !payerConnectionId) return;
  try {
    await ctx.subscribe({ clientId: ref.clientId, organizationId: run.organizationId, payerConnectionId });
  } catch (error) {
    log.error('Payer subscription not made', {
      clientId: ref.clientId,
      payerConnectionId,
      errorName: (error as Error).name,
    });
  }
}

/** $inquire found no claim: the request's authorization says so (`not_found`), as a portal read would. */
export async function recordNotFound(ctx: PayerTaskContext, ref: RunRef, run: RpaRunRecord): Promise<TaskResult> {
  const at = ctx.now().toISOString();
  const next: Authorization = {
    status: 'not_found',
    number: null,
    decisionDate: null,
    lastCheckedAt: at,
    channel: 'pas',
    items: [],
    reasons: [],
  };
  const updated = await setAuthorization(ctx.requests, ref, next, changedByRun(run), at, rechecksFor(ctx, run));
  const change = { authorization: { status: 'not_found' as const, number: null, decisionDate: null } };
  return ctx.finish(ref, updated ? 'not_found_at_payer' : 'request_not_found', change);
}
