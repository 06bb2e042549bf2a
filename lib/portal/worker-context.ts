import type { StoredRequest } from '#lib/entities/request';
import type { RpaRunRecord, RunKind, RunOutcome } from '#lib/entities/rpa';
import { keys } from '#lib/object-keys';
import type { PortalCredentials } from '#lib/portal-accounts/credentials';
import type { PortalAccountStore } from '#lib/portal-accounts/portal-account-store';
import type { RecheckSettingsOf } from '#lib/rechecks/recheck-settings';
import type { RequestStore } from '#lib/requests/request-store';
import type { AutomationQuotaService } from '#lib/runs/automation-quotas';
import { RunNotFound } from '#lib/runs/errors';
import { stepOnRun } from '#lib/runs/run-changes';
import { finisherOf } from '#lib/runs/run-recorder';
import { isTerminal, type RunRef, type RunStore } from '#lib/runs/run-store';
import type { ScreenshotStorage } from '#lib/runs/screenshot-storage';
import { TIMEOUTS } from '#lib/runs/state-machines';
import type { AccountLeases } from './account-lease.ts';
import type { RunCredentialsRequest } from './credentials-source.ts';
import type { PortalDriver, PortalSession, PriorAuthorizationForm } from './drivers/driver.ts';

/*
 * What the browser worker's tasks share: their dependencies with defaults, their two failures the state
 * machine retries, and the steps every task writes on its runs.
 */

/** What a task reads of its invocation (the Lambda context): the time it has left. */
export interface Invocation {
  getRemainingTimeInMillis(): number;
}

/** The browser a driver logs in with, whatever launches it. */
export type Browser = Parameters<PortalDriver['logIn']>[0];

export interface WorkerDependencies {
  runs: RunStore;
  requests: Pick<RequestStore, 'get' | 'setAuthorization'>;
  accounts: Pick<PortalAccountStore, 'get' | 'setLastLogin'>;
  /** One session at a time per portal account. */
  leases: AccountLeases;
  /**
   * One run's credentials from the run credentials function (credentials-source.ts), asked with ids
   * only: this worker cannot decrypt. Throws PortalFailure('credentials_refused') when it refuses.
   */
  openCredentials: (request: RunCredentialsRequest) => Promise<PortalCredentials>;
  /**
   * The browser for one visit (warm-browser.ts: the worker's running Chromium, launched if need be);
   * throws PortalFailure('browser_failed') when Chromium does not start. The visit opens a context of
   * its own in it and closes that; releaseBrowser hands the browser back, never closing it for good.
   */
  acquireBrowser: () => Promise<Browser>;
  releaseBrowser: (browser: Browser) => Promise<void>;
  driverFor: (portalId: string) => PortalDriver | undefined;
  portalBaseUrl: (portalId: string) => string | undefined;
  formOf: (request: StoredRequest) => PriorAuthorizationForm;
  screenshots: Pick<ScreenshotStorage, 'put'>;
  /**
   * A client's re-check settings (lib/rechecks/recheck-settings.ts): a status read that finds the
   * authorization undecided schedules its re-checks on the run's behalf. None: nothing is scheduled.
   */
  recheckSettings?: RecheckSettingsOf;
  /** The client's runs in flight (automation-quotas.ts): an execution whose runs ended lands. */
  flights?: Pick<AutomationQuotaService, 'landed'>;
  /** Per portal call (login, fill, read); never more than the task has left. */
  timeoutMs?: number;
  /** The browser Tasks' timeout (TIMEOUTS.browserTask): no work runs past it (lib/runs/task-time.ts). */
  taskTimeoutSeconds?: number;
  /** A batch's lookups in one invocation, at most; the state machine calls again for the rest. */
  lookupsPerInvocation?: number;
  /** The polite pause between two lookups of one session (portals rate-limit). */
  pauseBetweenLookupsMs?: number;
  now?: () => Date;
}

/**
 * A batch's lookups per invocation, at most: a whole batch (25), so that a group signs in once. A
 * lookup and the pause take about a second, so 25 fit well inside the Task's 120 s; the time left is
 * checked before each one anyway (lookUpEach).
 */
const LOOKUPS_PER_INVOCATION = 25;
const PAUSE_BETWEEN_LOOKUPS_MS = 500;

/** The dependencies with their defaults filled in, and the finisher built on them. */
export type WorkerContext = WorkerDependencies & {
  now: () => Date;
  timeoutMs: number;
  taskTimeoutSeconds: number;
  lookupsPerInvocation: number;
  pauseMs: number;
  finish: ReturnType<typeof finisherOf>;
  /** A step of a run still going (stepOn); called as a method, so the step texts read as they are written. */
  addStep: (
    ref: RunRef,
    step: string,
    detail?: string,
    change?: Partial<RpaRunRecord>,
  ) => Promise<RpaRunRecord | undefined>;
  /** The n-th screenshot of the run (screenshotOf). */
  capture: (ref: RunRef, session: PortalSession, label: string, n: number) => Promise<ScreenshotRecord>;
};

type ScreenshotRecord = RpaRunRecord['screenshots'][number];

export function contextOf(deps: WorkerDependencies): WorkerContext {
  const ctx: WorkerContext = {
    ...deps,
    now: deps.now ?? (() => new Date()),
    timeoutMs: deps.timeoutMs ?? 30_000,
    taskTimeoutSeconds: deps.taskTimeoutSeconds ?? TIMEOUTS.browserTask,
    lookupsPerInvocation: deps.lookupsPerInvocation ?? LOOKUPS_PER_INVOCATION,
    pauseMs: deps.pauseBetweenLookupsMs ?? PAUSE_BETWEEN_LOOKUPS_MS,
    finish: finisherOf(deps),
    // Methods, so that every step text and label is written at the call (test/unit/openapi-rpa-schemas.test.ts reads them there).
    addStep: (ref, step, detail, change) => stepOnRun(ctx.runs, ctx.now, ref, step, detail, change),
    capture: (ref, session, label, n) => screenshotOf(ctx, ref, session, label, n),
  };
  return ctx;
}

export async function finishAll(ctx: WorkerContext, refs: RunRef[], outcome: RunOutcome): Promise<void> {
  for (const ref of refs) await ctx.finish(ref, outcome);
}

/** A run of `kind` that goes on: `running`, with its attempt counted; undefined when it ended already. */
export async function startRun(ctx: WorkerContext, ref: RunRef, kind: RunKind) {
  const stored = await ctx.runs.getRun(ref);
  if (!stored || stored.kind !== kind) throw new RunNotFound();
  if (isTerminal(stored.status)) return undefined;
  const attempt = stored.steps.filter((step) => step.step === 'started').length + 1;
  return ctx.addStep(ref, 'started', `attempt ${attempt}`, { status: 'running' });
}

/** The n-th screenshot of the run, stored under its key; its metadata. */
async function screenshotOf(
  ctx: WorkerContext,
  ref: RunRef,
  session: PortalSession,
  label: string,
  n: number,
): Promise<ScreenshotRecord> {
  const png = await session.screenshot(label);
  const objectKey = keys.rpaScreenshotObject(ref.clientId, ref.runId, n);
  await ctx.screenshots.put(objectKey, png);
  return { objectKey, label, capturedAt: ctx.now().toISOString() };
}
