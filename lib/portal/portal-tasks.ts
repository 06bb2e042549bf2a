import type { BatchItem } from '#lib/entities/rpa';
import { RunNotFound } from '#lib/runs/errors';
import { liveRunsOf } from '#lib/runs/live-runs';
import { idsOf, refsOf, resultOf, runRefOf, type TaskResult } from '#lib/runs/run-recorder';
import { isTerminal, type RunRef } from '#lib/runs/run-store';
import { taskTime } from '#lib/runs/task-time';
import type { PortalSession } from './drivers/driver.ts';
import { CLOSING_MS, lookupDeadlineMs, MIN_LOOKUP_MS, sessionUntil } from './lookup-deadlines.ts';
import { visit, withLease } from './portal-visit.ts';
import { fillForm, onPortal, readStatus } from './portal-work.ts';
import { type Invocation, startRun, type WorkerContext } from './worker-context.ts';

/*
 * The browser worker's two tasks (docs/rpa.md, "Orchestration"): fill a portal's form for one run;
 * read a batch group's authorization statuses in one session.
 */

/** A batch's requests on one portal account, checked in one signed-in session (docs/rpa.md). */
export interface AccountGroupInput {
  clientId: string;
  batchId: string;
  portalAccountId: string;
  items: BatchItem[];
}

/** What a group's task leaves for the next invocation: the items it did not reach. */
export interface GroupResult {
  remaining: BatchItem[];
  more: boolean;
}

/** FillPortalForm: one run, one visit; the request is read first, so a deleted one costs no login. */
export async function fillPortalForm(ctx: WorkerContext, input: unknown, invocation?: Invocation): Promise<TaskResult> {
  const task = taskTime(invocation, ctx.taskTimeoutSeconds);
  const ref = runRefOf(input);
  const stored = await ctx.runs.getRun(ref);
  if (stored?.kind !== 'view-on-page') throw new RunNotFound();
  if (isTerminal(stored.status)) return resultOf(stored, ref.runId);
  const { portalAccountId } = stored;
  const request = await ctx.requests.get(ref.clientId, ref.externalId);
  if (!portalAccountId || !request) return ctx.finish(ref, request ? 'no_portal_account' : 'request_not_found');
  return withLease(ctx, { clientId: ref.clientId, portalAccountId, holder: ref.runId, live: [ref] }, async () => {
    const run = await startRun(ctx, ref, 'view-on-page');
    if (!run) return resultOf(await ctx.runs.getRun(ref), ref.runId);
    const v = { holder: ref.runId, portalAccountId, live: [ref], anchor: run };
    const result = await visit(ctx, v, task, (session) =>
      onPortal(ctx, ref, run, session, fillForm, { known: request }),
    );
    return result ?? resultOf(await ctx.runs.getRun(ref), ref.runId);
  });
}

/**
 * Looks up the group's runs one after the other in the session, while the task has time; each lookup
 * within its own deadline (lookup-deadlines.ts). One that hangs ends its run `portal_timeout` alone.
 */
async function lookUpEach(ctx: WorkerContext, live: RunRef[], session: PortalSession, task: Invocation) {
  const lookups = Math.min(live.length, ctx.lookupsPerInvocation);
  let done = 0;
  for (const ref of live.slice(0, lookups)) {
    // The first always goes (its run was started); another only if a lookup on a slow portal still fits.
    if (done > 0 && task.getRemainingTimeInMillis() - CLOSING_MS < MIN_LOOKUP_MS) break;
    if (done > 0 && ctx.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, ctx.pauseMs));
    // The first run was started before the login; the others start now.
    const run = done === 0 ? await ctx.runs.getRun(ref) : await startRun(ctx, ref, 'check-auth-status');
    const deadline = Date.now() + lookupDeadlineMs(task.getRemainingTimeInMillis(), lookups - done, ctx.timeoutMs);
    done++;
    if (run && !isTerminal(run.status)) {
      await onPortal(ctx, ref, run, sessionUntil(session, deadline), readStatus, { hangEndsRun: true });
    }
  }
  return done;
}

/** Refs back to the batch's items. */
const itemsOf = (refs: RunRef[]): BatchItem[] =>
  refs.map(({ externalId, runId }) => ({ requestExternalId: externalId, runId }));

/**
 * CheckPortalStatus: a batch's requests on one portal account, in one session (one login), at most
 * `lookupsPerInvocation` of them; the rest are returned for the state machine's next call.
 */
export async function checkPortalStatus(
  ctx: WorkerContext,
  input: unknown,
  invocation?: Invocation,
): Promise<GroupResult> {
  const { clientId, batchId, portalAccountId } = idsOf(input, ['clientId', 'batchId', 'portalAccountId']) as {
    clientId: string;
    batchId: string;
    portalAccountId: string;
  };
  const task = taskTime(invocation, ctx.taskTimeoutSeconds);
  const refs = refsOf(clientId, (input as AccountGroupInput).items);
  const live = await liveRunsOf(ctx.runs, clientId, refs, 'check-auth-status');
  const [first] = live;
  if (!first) return { remaining: [], more: false };
  const holder = `${batchId}#${portalAccountId}`;
  const reached = await withLease(ctx, { clientId, portalAccountId, holder, live }, async () => {
    const anchor = await startRun(ctx, first, 'check-auth-status');
    // Ended meanwhile (its Catch, a duplicate delivery): nothing to do for it; the rest next time.
    if (!anchor) return 1;
    return visit(ctx, { holder, portalAccountId, live, anchor }, task, (session) =>
      lookUpEach(ctx, live, session, task),
    );
  });
  const remaining = reached === undefined ? [] : itemsOf(live.slice(reached));
  return { remaining, more: remaining.length > 0 };
}
