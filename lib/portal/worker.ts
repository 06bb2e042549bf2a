import type { RunKind } from '#lib/entities/rpa';
import { log } from '#lib/observability/logger';
import { InvalidTaskInput, PortalAccountBusy, PortalUnavailable, RunNotFound } from '#lib/runs/errors';
import { refsOf, resultOf, runRecorder, runRefOf, type TaskResult } from '#lib/runs/run-recorder';
import type { RunRef } from '#lib/runs/run-store';
import { type AccountGroupInput, checkPortalStatus, fillPortalForm, type GroupResult } from './portal-tasks.ts';
import {
  contextOf,
  finishAll,
  type Invocation,
  type WorkerContext,
  type WorkerDependencies,
} from './worker-context.ts';

/*
 * The browser worker's two tasks (portal-tasks.ts; docs/rpa.md, "Orchestration"): fill a portal's form;
 * read a batch group's authorization statuses in one session. Runs end through run-recorder.ts. Tasks
 * take and return ids and outcomes only. Credentials are asked for (portal-visit.ts) from the run
 * credentials function, which alone decrypts them, kept in memory for one login, and never logged,
 * stored or returned; what a portal or an error says is never stored either: steps are fixed texts of ours.
 */

/** Any error but a retry: the runs end `portal_error` here rather than through the Catch. */
function guarded<R>(
  ctx: WorkerContext,
  kind: RunKind,
  task: (ctx: WorkerContext, input: unknown, invocation?: Invocation) => Promise<R>,
  refsFor: (input: unknown) => RunRef[],
) {
  return async (input: unknown, invocation?: Invocation): Promise<R | TaskResult | GroupResult> => {
    try {
      return await task(ctx, input, invocation);
    } catch (error) {
      if (
        error instanceof PortalUnavailable ||
        error instanceof PortalAccountBusy ||
        error instanceof RunNotFound ||
        error instanceof InvalidTaskInput
      ) {
        throw error;
      }
      // Name only: messages of SDK, browser or decryption errors can quote data.
      log.error('Automation run failed unexpectedly', { errorName: (error as Error).name, kind });
      const refs = refsFor(input);
      await finishAll(ctx, refs, 'portal_error');
      return refs.length === 1 && kind === 'view-on-page'
        ? resultOf(await ctx.runs.getRun(refs[0]!), refs[0]!.runId)
        : { remaining: [], more: false };
    }
  };
}

export const rpaWorker = (deps: WorkerDependencies) => {
  const ctx = contextOf(deps);
  return {
    /** FillPortalForm (view-on-page): logs in, fills the form, captures it, stops before submitting. */
    fillPortalForm: guarded(ctx, 'view-on-page', fillPortalForm, (input) => [runRefOf(input)]) as (
      input: unknown,
      invocation?: Invocation,
    ) => Promise<TaskResult>,

    /** CheckPortalStatus (a batch's group): logs in once, reads each status, updates each request's authorization. */
    checkPortalStatus: guarded(ctx, 'check-auth-status', checkPortalStatus, (input) =>
      refsOf((input as AccountGroupInput).clientId, (input as AccountGroupInput).items),
    ) as (input: unknown, invocation?: Invocation) => Promise<GroupResult>,

    // The recorders answer on the run store alone (recorder-service.ts wires them for their functions);
    // they are here too so that a test drives a whole execution through one object.
    ...runRecorder(deps),
  };
};
