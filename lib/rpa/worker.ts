import { keys } from '#lib/keys';
import { log } from '#lib/observability/logger';
import { recordAutomationRun } from '#lib/observability/metrics';
import type { PortalCredentials } from '#lib/portal-accounts/credentials';
import type { LastLogin, PortalAccountStore, StoredPortalAccount } from '#lib/portal-accounts/portal-account-store';
import type { Authorization, RequestStore, StoredRequest } from '#lib/requests/request-store';
import {
  isPortalFailure,
  type PortalAuthorization,
  type PortalDriver,
  type PortalFailureOutcome,
  type PortalSession,
  type PriorAuthorizationForm,
  type StatusQuery,
} from './drivers/driver.ts';
import { checkPortalAuthorization, enteredValuesOf } from './portal-answers.ts';
import {
  isTerminal,
  type RpaRunRecord,
  type RunKind,
  type RunOutcome,
  type RunRef,
  type RunStatus,
  type RunStore,
} from './run-store.ts';
import { changeBatch, changeRun, statusOfOutcome, withStep } from './runs.ts';
import type { ScreenshotStorage } from './screenshot-storage.ts';

/*
 * The automation's task handlers (docs/rpa.md, "Orchestration"): the browser worker's two tasks
 * (fill a portal's form; read an authorization's status), and the recorders (a run that failed for
 * good; a finished batch). Tasks take and return ids and outcomes only. Credentials are opened here
 * and nowhere else, kept in memory for one login, and never logged, stored or returned; what a portal
 * or an error says is never stored either: steps are fixed texts of ours.
 */

/** The worker's own failure for a portal that did not answer: the state machine retries it. */
export class PortalUnavailable extends Error {
  constructor() {
    super('The portal did not answer in time');
    this.name = 'PortalUnavailable';
  }
}

/** A task for a run that does not exist (or is of another kind): there is nothing to record it on. */
export class RunNotFound extends Error {
  constructor() {
    super('The run does not exist');
    this.name = 'RunNotFound';
  }
}

/** Input that is not the ids the state machine passes. */
export class InvalidTaskInput extends Error {
  constructor(field: string) {
    super(`Task input field ${field} is missing or not a string`);
    this.name = 'InvalidTaskInput';
  }
}

export interface RunTaskInput {
  clientId: string;
  requestExternalId: string;
  runId: string;
  batchId?: string;
}

/** The Catch's error, as the state machine passes it: its name, or `{Error, Cause}`. */
export interface RecordFailureInput extends RunTaskInput {
  error?: string | { Error?: string; Cause?: string };
}

/** What a task reads of its invocation (the Lambda context): the time it has left. */
export interface Invocation {
  getRemainingTimeInMillis(): number;
}

export interface TaskResult {
  runId: string;
  status: RunStatus | null;
  outcome: RunOutcome | null;
}

/** The browser a driver logs in with, whatever launches it. */
type Browser = Parameters<PortalDriver['logIn']>[0];

export interface WorkerDependencies {
  runs: RunStore;
  requests: Pick<RequestStore, 'get' | 'setAuthorization'>;
  accounts: Pick<PortalAccountStore, 'page' | 'setLastLogin'>;
  /** lib/portal-accounts/credentials.ts: the one call that decrypts a portal password. */
  openCredentials: (account: StoredPortalAccount) => Promise<PortalCredentials>;
  /** Throws PortalFailure('browser_failed') when Chromium does not start. */
  launchBrowser: () => Promise<Browser>;
  closeBrowser: (browser: Browser) => Promise<void>;
  driverFor: (portalId: string) => PortalDriver | undefined;
  portalBaseUrl: (portalId: string) => string | undefined;
  formOf: (request: StoredRequest) => PriorAuthorizationForm;
  screenshots: Pick<ScreenshotStorage, 'put'>;
  /** Per portal call (login, fill, read); never more than the invocation has left. */
  timeoutMs?: number;
  now?: () => Date;
}

/** Portal accounts read while looking for one that serves the payer (an organization has a handful). */
const MAX_ACCOUNTS_EVALUATED = 1000;

/** The step each outcome ends a run with: our words, never the portal's. */
const OUTCOME_STEPS: Record<RunOutcome, string> = {
  form_filled: 'form filled; stopped before submitting',
  status_read: 'authorization status read; request updated',
  not_found_on_portal: 'the portal does not know this request; request updated',
  wrong_password: 'the portal refused the credentials',
  account_locked: 'the portal account is locked',
  mfa_required: 'the portal asks for a one-time code the account has no secret for',
  no_portal_account: "no active portal account of the organization serves the request's payer",
  portal_timeout: 'the portal did not answer in time',
  request_not_found: 'the request does not exist',
  browser_failed: 'the browser did not start',
  portal_error: 'the portal answered in a way the automation did not expect',
  unexpected_origin: 'the portal led the browser outside its registered origins; the session was ended',
};

/** What a refused login is recorded as on the portal account. */
const LOGIN_RESULTS: Partial<Record<PortalFailureOutcome, LastLogin['result']>> = {
  wrong_password: 'failed',
  account_locked: 'locked',
  mfa_required: 'mfa_required',
};

/** The Catch's error names that say what happened; any other is `portal_error`. */
const OUTCOME_OF_ERROR: Record<string, RunOutcome> = {
  PortalUnavailable: 'portal_timeout',
  'States.Timeout': 'portal_timeout',
  'States.HeartbeatTimeout': 'portal_timeout',
  'Lambda.ClientExecutionTimeoutException': 'portal_timeout',
};

/** The portal's answer in the request's own terms. */
const AUTHORIZATION_STATUS: Record<PortalAuthorization['status'], Authorization['status']> = {
  approved: 'approved',
  denied: 'denied',
  pended: 'pending',
  not_found: 'not_found',
};

const idsOf = (input: unknown, names: readonly string[]): Record<string, string> => {
  const record = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  return Object.fromEntries(
    names.map((name) => {
      const value = record[name];
      if (typeof value !== 'string' || value === '') throw new InvalidTaskInput(name);
      return [name, value];
    }),
  );
};

const runRefOf = (input: unknown): RunRef => {
  const { clientId, requestExternalId, runId } = idsOf(input, ['clientId', 'requestExternalId', 'runId']);
  return { clientId: clientId!, externalId: requestExternalId!, runId: runId! };
};

const stringAt = (document: Record<string, unknown>, ...path: string[]): string | undefined => {
  let value: unknown = document;
  for (const name of path) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;
  }
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** A run's end, as a task returns it. */
const resultOf = (run: RpaRunRecord | undefined, runId: string): TaskResult => ({
  runId,
  status: run?.status ?? null,
  outcome: run?.outcome ?? null,
});

/** What the recorders need: no browser, portal, credentials or screenshots (recorder-service.ts). */
export type RecorderDependencies = Pick<WorkerDependencies, 'runs' | 'now'>;

/** Ends a run with `outcome` (unless it already ended: a task delivered twice records once). */
const finisherOf =
  ({ runs, now = () => new Date() }: RecorderDependencies) =>
  async (ref: RunRef, outcome: RunOutcome, change: Partial<RpaRunRecord> = {}) => {
    const run = await changeRun(
      runs,
      ref,
      (current) =>
        isTerminal(current.status)
          ? undefined
          : {
              ...current,
              ...change,
              status: statusOfOutcome(outcome),
              outcome,
              steps: withStep(current.steps, now().toISOString(), OUTCOME_STEPS[outcome], outcome),
            },
      now,
    );
    log.info('Automation run ended', { runId: ref.runId, kind: run?.kind, outcome: run?.outcome });
    if (run?.outcome) recordAutomationRun(run.kind, run.outcome);
    return resultOf(run, ref.runId);
  };

/** The recorders: the Catch of the browser tasks, and the end of a batch. */
export const runRecorder = (deps: RecorderDependencies) => {
  const { runs } = deps;
  const now = deps.now ?? (() => new Date());
  const finish = finisherOf(deps);
  return {
    /** RecordRunFailure (the Catch of both): the run failed for good; its outcome from the error's name. */
    recordRunFailure: async (input: unknown): Promise<TaskResult> => {
      const ref = runRefOf(input);
      const error = (input as RecordFailureInput).error;
      const name = typeof error === 'string' ? error : error?.Error;
      const outcome = (name && OUTCOME_OF_ERROR[name]) || 'portal_error';
      log.warn('Automation task failed', { runId: ref.runId, errorName: name?.slice(0, 100), outcome });
      return finish(ref, outcome);
    },

    /**
     * FinishBatch: every item has been handled. A run still not ended (its recorder failed too) is
     * failed now, so the batch's progress adds up.
     */
    finishBatch: async (input: unknown) => {
      const { clientId, batchId } = idsOf(input, ['clientId', 'batchId']) as { clientId: string; batchId: string };
      const batch = await runs.getBatch(clientId, batchId);
      if (!batch) throw new RunNotFound();
      const read = await runs.getRuns(
        clientId,
        batch.items.map((item) => ({ externalId: item.requestExternalId, runId: item.runId })),
      );
      for (const run of read.filter((candidate) => !isTerminal(candidate.status))) {
        await finish({ clientId, externalId: run.externalId, runId: run.runId }, 'portal_error');
      }
      const finished = await changeBatch(
        runs,
        clientId,
        batchId,
        (current) =>
          current.status === 'done' ? undefined : { ...current, status: 'done', finishedAt: now().toISOString() },
        now,
      );
      log.info('Automation batch finished', { batchId, total: batch.items.length });
      return { batchId, status: finished?.status ?? 'done' };
    },
  };
};

export const rpaWorker = (deps: WorkerDependencies) => {
  const { runs, requests, accounts, screenshots } = deps;
  const now = deps.now ?? (() => new Date());
  const timeoutMs = deps.timeoutMs ?? 30_000;
  const timestamp = () => now().toISOString();

  /**
   * A step of a run still going. A run that has ended stays as it ended: an attempt that goes on after its
   * task timed out (the recorder failed the run meanwhile) writes nothing more on it.
   */
  const addStep = (ref: RunRef, step: string, detail?: string, change: Partial<RpaRunRecord> = {}) =>
    changeRun(
      runs,
      ref,
      (run) =>
        isTerminal(run.status)
          ? undefined
          : { ...run, ...change, steps: withStep(run.steps, timestamp(), step, detail) },
      now,
    );

  const finish = finisherOf(deps);

  const recordLogin = async (account: StoredPortalAccount, result: LastLogin['result']) => {
    await accounts.setLastLogin(account.clientId, account.externalId, { result, at: timestamp() });
  };

  /**
   * The organization's oldest active account that serves the request's payer (`patient.PayerId` in
   * its payerIds) on a portal that has a driver.
   */
  const portalAccountFor = async (run: RpaRunRecord, request: StoredRequest) => {
    const payerId = stringAt(request.document, 'patient', 'PayerId');
    if (!payerId) return undefined;
    let after: string | undefined;
    let evaluated = 0;
    do {
      const page = await accounts.page({
        clientId: run.clientId,
        organizationId: run.organizationId,
        criteria: { payerId, status: 'active' },
        limit: 25,
        maxEvaluated: MAX_ACCOUNTS_EVALUATED - evaluated,
        ...(after ? { after } : {}),
      });
      const usable = page.items.find(
        (account) => deps.driverFor(account.portalId) && deps.portalBaseUrl(account.portalId),
      );
      if (usable) return usable;
      evaluated += Math.max(page.items.length, 1);
      after = page.next;
    } while (after && evaluated < MAX_ACCOUNTS_EVALUATED);
    return undefined;
  };

  /** The n-th screenshot of the run, stored under its key; its metadata. */
  const capture = async (ref: RunRef, session: PortalSession, label: string, n: number) => {
    const png = await session.screenshot(label);
    const objectKey = keys.rpaScreenshotObject(ref.clientId, ref.runId, n);
    await screenshots.put(objectKey, png);
    return { objectKey, label, capturedAt: timestamp() };
  };

  /** The work on the portal once logged in: what the run of `kind` ends with. */
  const onPortal = async (
    kind: RunKind,
    ref: RunRef,
    run: RpaRunRecord,
    request: StoredRequest,
    session: PortalSession,
  ): Promise<TaskResult> => {
    const n = run.screenshots.length + 1;
    if (kind === 'view-on-page') {
      // What we typed, and per field whether the page held the same: never the page's own text.
      const enteredValues = enteredValuesOf(await session.fillPriorAuthorization(deps.formOf(request)));
      const entered = Object.values(enteredValues);
      const differing = entered.filter((field) => !field.readBack).length;
      const detail = `${entered.length} fields${differing ? `, ${differing} read back differently` : ''}`;
      await addStep(ref, 'form filled', detail, { enteredValues });
      const shot = await capture(ref, session, 'the filled form, before submitting', n);
      return finish(ref, 'form_filled', { screenshots: [...run.screenshots, shot] });
    }
    const memberId = stringAt(request.document, 'patient', 'memberId') ?? '';
    const fromDate = stringAt(request.document, 'fromDate');
    const query: StatusQuery = { memberId, requestExternalId: ref.externalId, ...(fromDate ? { fromDate } : {}) };
    const answer = await session.readAuthorizationStatus(query);
    const shot = await capture(ref, session, 'the authorization status', n);
    // Status, number and date pass a pattern and a length before anything of them is stored.
    const checked = checkPortalAuthorization(answer);
    if ('refused' in checked) {
      await addStep(ref, "the portal's answer was refused", checked.refused);
      return finish(ref, 'portal_error', { screenshots: [...run.screenshots, shot] });
    }
    const authorization = checked.record;
    const at = timestamp();
    const updated = await requests.setAuthorization(
      ref.clientId,
      ref.externalId,
      {
        status: AUTHORIZATION_STATUS[authorization.status],
        number: authorization.number,
        decisionDate: authorization.decisionDate,
        lastCheckedAt: at,
      },
      at,
    );
    if (!updated) return finish(ref, 'request_not_found', { authorization, screenshots: [...run.screenshots, shot] });
    return finish(ref, authorization.status === 'not_found' ? 'not_found_on_portal' : 'status_read', {
      authorization,
      screenshots: [...run.screenshots, shot],
    });
  };

  /** A PortalFailure after login: a page worth a screenshot, then the outcome (or a retry). */
  const failedOnPortal = async (ref: RunRef, session: PortalSession, outcome: PortalFailureOutcome) => {
    try {
      const run = await runs.getRun(ref);
      if (run && !isTerminal(run.status)) {
        const shot = await capture(ref, session, 'the page when it failed', run.screenshots.length + 1);
        await addStep(ref, 'screenshot of the failure', undefined, { screenshots: [...run.screenshots, shot] });
      }
    } catch {
      // The failure itself is what matters; a page that cannot be captured changes nothing.
    }
    if (outcome === 'portal_timeout') {
      await addStep(ref, 'the portal did not answer in time; the attempt will be retried');
      throw new PortalUnavailable();
    }
    return finish(ref, outcome);
  };

  const runOnPortal = async (kind: RunKind, input: unknown, invocation?: Invocation): Promise<TaskResult> => {
    const ref = runRefOf(input);
    const stored = await runs.getRun(ref);
    if (!stored || stored.kind !== kind) throw new RunNotFound();
    if (isTerminal(stored.status)) return resultOf(stored, ref.runId);
    const attempt = stored.steps.filter((step) => step.step === 'started').length + 1;
    const run = (await addStep(ref, 'started', `attempt ${attempt}`, { status: 'running' }))!;

    const request = await requests.get(ref.clientId, ref.externalId);
    if (!request) return finish(ref, 'request_not_found');
    const account = await portalAccountFor(run, request);
    if (!account) return finish(ref, 'no_portal_account');
    const driver = deps.driverFor(account.portalId)!;
    const baseUrl = deps.portalBaseUrl(account.portalId)!;
    await addStep(ref, 'portal account selected', `${account.portalId} ${account.externalId}`, {
      portalAccountId: account.externalId,
      portalId: account.portalId,
    });

    let browser: Browser;
    try {
      browser = await deps.launchBrowser();
    } catch (error) {
      if (isPortalFailure(error)) return finish(ref, 'browser_failed');
      throw error;
    }
    try {
      let session: PortalSession;
      try {
        // Bounded by what the invocation has left at login: past its deadline nobody waits for the answer.
        const left = invocation?.getRemainingTimeInMillis() ?? timeoutMs;
        session = await driver.logIn(browser, await deps.openCredentials(account), {
          baseUrl,
          timeoutMs: Math.max(1, Math.min(timeoutMs, left)),
        });
      } catch (error) {
        if (!isPortalFailure(error)) throw error;
        const result = LOGIN_RESULTS[error.outcome];
        if (result) await recordLogin(account, result);
        if (error.outcome === 'portal_timeout') {
          await addStep(ref, 'the portal did not answer in time; the attempt will be retried');
          throw new PortalUnavailable();
        }
        return finish(ref, error.outcome);
      }
      await recordLogin(account, 'succeeded');
      await addStep(ref, 'logged in');
      try {
        return await onPortal(kind, ref, run, request, session);
      } catch (error) {
        if (!isPortalFailure(error)) throw error;
        return await failedOnPortal(ref, session, error.outcome);
      } finally {
        await session.close();
      }
    } finally {
      await deps.closeBrowser(browser);
    }
  };

  /** Anything but a retry: the run ends `portal_error` here rather than through the Catch. */
  const guarded = async (kind: RunKind, input: unknown, invocation?: Invocation): Promise<TaskResult> => {
    try {
      return await runOnPortal(kind, input, invocation);
    } catch (error) {
      if (error instanceof PortalUnavailable || error instanceof RunNotFound || error instanceof InvalidTaskInput) {
        throw error;
      }
      // Name only: messages of SDK, browser or decryption errors can quote data.
      log.error('Automation run failed unexpectedly', { errorName: (error as Error).name, kind });
      return finish(runRefOf(input), 'portal_error');
    }
  };

  return {
    /** FillPortalForm (view-on-page): logs in, fills the form, captures it, stops before submitting. */
    fillPortalForm: (input: unknown, invocation?: Invocation) => guarded('view-on-page', input, invocation),

    /** CheckPortalStatus (a batch's item): logs in, reads the status, updates the request's authorization. */
    checkPortalStatus: (input: unknown, invocation?: Invocation) => guarded('check-auth-status', input, invocation),

    ...runRecorder(deps),
  };
};

export type RpaWorker = ReturnType<typeof rpaWorker>;
