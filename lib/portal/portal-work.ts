import { changedByRun } from '#lib/entities/authorization-history';
import type { Authorization, StoredRequest } from '#lib/entities/request';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { type RecheckContext, setAuthorization } from '#lib/requests/authorization-changes';
import { PortalUnavailable } from '#lib/runs/errors';
import type { TaskResult } from '#lib/runs/run-recorder';
import { isTerminal, type RunRef } from '#lib/runs/run-store';
import {
  isPortalFailure,
  type PortalAuthorization,
  type PortalFailure,
  type PortalSession,
  type StatusQuery,
} from './drivers/driver.ts';
import { checkPortalAuthorization, enteredValuesOf } from './portal-answers.ts';
import type { WorkerContext } from './worker-context.ts';

/*
 * One run's work on the portal, once signed in: fill the form (view-on-page) or read the status
 * (check-auth-status); a driver's named failure is recorded on the run, or retried.
 */

/** The portal's answer in the request's own terms. */
const AUTHORIZATION_STATUS: Record<PortalAuthorization['status'], Authorization['status']> = {
  approved: 'approved',
  partially_approved: 'partially_approved',
  denied: 'denied',
  pended: 'pending',
  not_found: 'not_found',
};

const stringAt = (document: Record<string, unknown>, ...path: string[]): string | undefined => {
  let value: unknown = document;
  for (const name of path) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
  }
  return typeof value === 'string' && value !== '' ? value : undefined;
};

type Work = (
  ctx: WorkerContext,
  ref: RunRef,
  run: RpaRunRecord,
  request: StoredRequest,
  session: PortalSession,
) => Promise<TaskResult>;

/** view-on-page, once logged in: fills the form, captures it, stops before submitting. */
export const fillForm: Work = async (ctx, ref, run, request, session) => {
  // What we typed, and per field whether the page held the same: never the page's own text.
  const enteredValues = enteredValuesOf(await session.fillPriorAuthorization(ctx.formOf(request)));
  const entered = Object.values(enteredValues);
  const differing = entered.filter((field) => !field.readBack).length;
  const detail = `${entered.length} fields${differing ? `, ${differing} read back differently` : ''}`;
  await ctx.addStep(ref, 'form filled', detail, { enteredValues });
  const shot = await ctx.capture(ref, session, 'the filled form, before submitting', run.screenshots.length + 1);
  return ctx.finish(ref, 'form_filled', { screenshots: [...run.screenshots, shot] });
};

/** Who a re-check of what `run` read runs for: its client user, organization and portal account. */
function rechecksFor(ctx: WorkerContext, run: RpaRunRecord): RecheckContext | undefined {
  return ctx.recheckSettings && run.portalAccountId
    ? {
        settingsOf: ctx.recheckSettings,
        onBehalfOf: {
          clientUserId: run.clientUserId,
          organizationId: run.organizationId,
          channel: 'portal',
          portalAccountId: run.portalAccountId,
        },
      }
    : undefined;
}

/** check-auth-status, once logged in: reads the status and updates the request's authorization. */
export const readStatus: Work = async (ctx, ref, run, request, session) => {
  const memberId = stringAt(request.document, 'patient', 'memberId') ?? '';
  const fromDate = stringAt(request.document, 'fromDate');
  const query: StatusQuery = { memberId, requestExternalId: ref.externalId, ...(fromDate ? { fromDate } : {}) };
  const answer = await session.readAuthorizationStatus(query);
  const shot = await ctx.capture(ref, session, 'the authorization status', run.screenshots.length + 1);
  // Status, number and date pass a pattern and a length before anything of them is stored.
  const checked = checkPortalAuthorization(answer);
  if ('refused' in checked) {
    await ctx.addStep(ref, "the portal's answer was refused", checked.refused);
    return ctx.finish(ref, 'portal_error', { screenshots: [...run.screenshots, shot] });
  }
  const authorization = checked.record;
  const at = ctx.now().toISOString();
  const updated = await setAuthorization(
    ctx.requests,
    ref,
    {
      status: AUTHORIZATION_STATUS[authorization.status],
      number: authorization.number,
      decisionDate: authorization.decisionDate,
      lastCheckedAt: at,
      // A portal shows the decision, not its items or reasons: those the payer-API channel reads alone.
      channel: 'portal',
    },
    changedByRun(run),
    at,
    rechecksFor(ctx, run),
  );
  const screenshotsNow = [...run.screenshots, shot];
  if (!updated) return ctx.finish(ref, 'request_not_found', { authorization, screenshots: screenshotsNow });
  const outcome = authorization.status === 'not_found' ? 'not_found_on_portal' : 'status_read';
  return ctx.finish(ref, outcome, { authorization, screenshots: screenshotsNow });
};

/** How a failure of one run's work is taken. */
interface OnFailure {
  /**
   * A call that hung ends this run `portal_timeout` and nothing else: a batch's lookup, whose group goes
   * on with the next one. Otherwise a timeout is the portal's and the attempt is retried.
   */
  hangEndsRun?: boolean;
}

/** A PortalFailure after login: a page worth a screenshot, then the outcome (or a retry). */
async function failedOnPortal(
  ctx: WorkerContext,
  ref: RunRef,
  session: PortalSession,
  failure: PortalFailure,
  { hangEndsRun = false }: OnFailure,
): Promise<TaskResult> {
  // A page that hung was closed by the driver (and capturing one could hang as long again): no screenshot.
  if (!failure.hung) await captureFailure(ctx, ref, session);
  if (failure.outcome === 'portal_timeout' && !(failure.hung && hangEndsRun)) {
    await ctx.addStep(ref, 'the portal did not answer in time; the attempt will be retried');
    throw new PortalUnavailable();
  }
  return ctx.finish(ref, failure.outcome);
}

async function captureFailure(ctx: WorkerContext, ref: RunRef, session: PortalSession): Promise<void> {
  try {
    const run = await ctx.runs.getRun(ref);
    if (run && !isTerminal(run.status)) {
      const shot = await ctx.capture(ref, session, 'the page when it failed', run.screenshots.length + 1);
      await ctx.addStep(ref, 'screenshot of the failure', undefined, { screenshots: [...run.screenshots, shot] });
    }
  } catch {
    // The failure itself is what matters; a page that cannot be captured changes nothing.
  }
}

/** One run's work in a session; a driver's named failure is recorded on the run (or retried). */
export async function onPortal(
  ctx: WorkerContext,
  ref: RunRef,
  run: RpaRunRecord,
  session: PortalSession,
  work: Work,
  { known, ...onFailure }: OnFailure & { known?: StoredRequest } = {},
): Promise<TaskResult> {
  const request = known ?? (await ctx.requests.get(ref.clientId, ref.externalId));
  if (!request) return ctx.finish(ref, 'request_not_found');
  try {
    return await work(ctx, ref, run, request, session);
  } catch (error) {
    if (!isPortalFailure(error)) throw error;
    return failedOnPortal(ctx, ref, session, error, onFailure);
  }
}
