import type { LastLogin, PortalAccountAttention, StoredPortalAccount } from '#lib/entities/portal-account';
import type { Authorization, StoredRequest } from '#lib/entities/request';
import type { BatchItem, RpaRunRecord, RunKind, RunOutcome } from '#lib/entities/rpa';
import { keys } from '#lib/keys';
import { log } from '#lib/observability/logger';
import type { PortalCredentials } from '#lib/portal-accounts/credentials';
import type { PortalAccountStore } from '#lib/portal-accounts/portal-account-store';
import type { RecheckSettingsOf } from '#lib/rechecks/recheck-settings';
import { type RecheckContext, setAuthorization } from '#lib/requests/authorization-changes';
import type { RequestStore } from '#lib/requests/request-store';
import { type AccountLeases, LEASE_SECONDS } from './account-lease.ts';
import type { AutomationQuotaService } from './automation-quotas.ts';
import type { RunCredentialsRequest } from './credentials-source.ts';
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
  finisherOf,
  InvalidTaskInput,
  idsOf,
  RunNotFound,
  refsOf,
  resultOf,
  runRecorder,
  runRefOf,
  type TaskResult,
} from './run-recorder.ts';
import { isTerminal, type RunRef, type RunStore } from './run-store.ts';
import { changeRun, withStep } from './runs.ts';
import type { ScreenshotStorage } from './screenshot-storage.ts';

/*
 * The browser worker's two tasks (docs/rpa.md, "Orchestration"): fill a portal's form; read a batch
 * group's authorization statuses in one session. Runs end through run-recorder.ts, whose recorders
 * this worker also answers for. Tasks take and return ids and outcomes only. Credentials are asked for
 * here (from the run credentials function, which alone decrypts them), kept in memory for one login,
 * and never logged, stored or returned; what a portal or an error says is never stored either:
 * steps are fixed texts of ours.
 */

/** The worker's own failure for a portal that did not answer: the state machine retries it. */
export class PortalUnavailable extends Error {
  constructor() {
    super('The portal did not answer in time');
    this.name = 'PortalUnavailable';
  }
}

/**
 * The run's portal account is in another session (one login at a time per account): the state
 * machine retries the task later, so the run waits behind the lease rather than beside it.
 */
export class PortalAccountBusy extends Error {
  constructor() {
    super('The portal account is in another automation session');
    this.name = 'PortalAccountBusy';
  }
}

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

/** What a task reads of its invocation (the Lambda context): the time it has left. */
export interface Invocation {
  getRemainingTimeInMillis(): number;
}

/** The browser a driver logs in with, whatever launches it. */
type Browser = Parameters<PortalDriver['logIn']>[0];

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
  /** Throws PortalFailure('browser_failed') when Chromium does not start. */
  launchBrowser: () => Promise<Browser>;
  closeBrowser: (browser: Browser) => Promise<void>;
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
  /** Per portal call (login, fill, read); never more than the invocation has left. */
  timeoutMs?: number;
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

/** What a refused login is recorded as on the portal account. */
const LOGIN_RESULTS: Partial<Record<PortalFailureOutcome, LastLogin['result']>> = {
  wrong_password: 'failed',
  account_locked: 'locked',
  mfa_required: 'mfa_required',
};

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

/** What a refused login leaves on the account: no automation logs in with it again until a client acts. */
const ATTENTION_OF: Partial<Record<PortalFailureOutcome, PortalAccountAttention['reason']>> = {
  wrong_password: 'wrong_password',
  account_locked: 'account_locked',
  mfa_required: 'mfa_required',
};

/** A signed-in session on one account, for the runs `live` names (one run, or a batch's group). */
interface Visit {
  /** Who holds the account's lease: the run, or the batch's group. */
  holder: string;
  portalAccountId: string;
  /** The runs the session serves; ended together by anything that happens before the login. */
  live: RunRef[];
  /** The run whose attempt the login counts as (the first of `live`). */
  anchor: RpaRunRecord;
}

export const rpaWorker = (deps: WorkerDependencies) => {
  const { runs, requests, accounts, screenshots, leases } = deps;
  const now = deps.now ?? (() => new Date());
  const timeoutMs = deps.timeoutMs ?? 30_000;
  const lookupsPerInvocation = deps.lookupsPerInvocation ?? LOOKUPS_PER_INVOCATION;
  const pauseMs = deps.pauseBetweenLookupsMs ?? PAUSE_BETWEEN_LOOKUPS_MS;
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
  const finishAll = async (refs: RunRef[], outcome: RunOutcome) => {
    for (const ref of refs) await finish(ref, outcome);
  };

  /** A run of `kind` that goes on: `running`, with its attempt counted; undefined when it ended already. */
  const start = async (ref: RunRef, kind: RunKind) => {
    const stored = await runs.getRun(ref);
    if (!stored || stored.kind !== kind) throw new RunNotFound();
    if (isTerminal(stored.status)) return undefined;
    const attempt = stored.steps.filter((step) => step.step === 'started').length + 1;
    return addStep(ref, 'started', `attempt ${attempt}`, { status: 'running' });
  };

  /** The n-th screenshot of the run, stored under its key; its metadata. */
  const capture = async (ref: RunRef, session: PortalSession, label: string, n: number) => {
    const png = await session.screenshot(label);
    const objectKey = keys.rpaScreenshotObject(ref.clientId, ref.runId, n);
    await screenshots.put(objectKey, png);
    return { objectKey, label, capturedAt: timestamp() };
  };

  /** view-on-page, once logged in: fills the form, captures it, stops before submitting. */
  const fillForm = async (ref: RunRef, run: RpaRunRecord, request: StoredRequest, session: PortalSession) => {
    // What we typed, and per field whether the page held the same: never the page's own text.
    const enteredValues = enteredValuesOf(await session.fillPriorAuthorization(deps.formOf(request)));
    const entered = Object.values(enteredValues);
    const differing = entered.filter((field) => !field.readBack).length;
    const detail = `${entered.length} fields${differing ? `, ${differing} read back differently` : ''}`;
    await addStep(ref, 'form filled', detail, { enteredValues });
    const shot = await capture(ref, session, 'the filled form, before submitting', run.screenshots.length + 1);
    return finish(ref, 'form_filled', { screenshots: [...run.screenshots, shot] });
  };

  /** Who a re-check of what `run` read runs for: its client user, organization and portal account. */
  const rechecksFor = (run: RpaRunRecord): RecheckContext | undefined =>
    deps.recheckSettings && run.portalAccountId
      ? {
          settingsOf: deps.recheckSettings,
          onBehalfOf: {
            clientUserId: run.clientUserId,
            organizationId: run.organizationId,
            portalAccountId: run.portalAccountId,
          },
        }
      : undefined;

  /** check-auth-status, once logged in: reads the status and updates the request's authorization. */
  const readStatus = async (ref: RunRef, run: RpaRunRecord, request: StoredRequest, session: PortalSession) => {
    const memberId = stringAt(request.document, 'patient', 'memberId') ?? '';
    const fromDate = stringAt(request.document, 'fromDate');
    const query: StatusQuery = { memberId, requestExternalId: ref.externalId, ...(fromDate ? { fromDate } : {}) };
    const answer = await session.readAuthorizationStatus(query);
    const shot = await capture(ref, session, 'the authorization status', run.screenshots.length + 1);
    // Status, number and date pass a pattern and a length before anything of them is stored.
    const checked = checkPortalAuthorization(answer);
    if ('refused' in checked) {
      await addStep(ref, "the portal's answer was refused", checked.refused);
      return finish(ref, 'portal_error', { screenshots: [...run.screenshots, shot] });
    }
    const authorization = checked.record;
    const at = timestamp();
    const updated = await setAuthorization(
      requests,
      ref,
      {
        status: AUTHORIZATION_STATUS[authorization.status],
        number: authorization.number,
        decisionDate: authorization.decisionDate,
        lastCheckedAt: at,
      },
      { kind: 'run', runId: ref.runId },
      at,
      rechecksFor(run),
    );
    const screenshotsNow = [...run.screenshots, shot];
    if (!updated) return finish(ref, 'request_not_found', { authorization, screenshots: screenshotsNow });
    const outcome = authorization.status === 'not_found' ? 'not_found_on_portal' : 'status_read';
    return finish(ref, outcome, { authorization, screenshots: screenshotsNow });
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

  /** One run's work in a session; a driver's named failure is recorded on the run (or retried). */
  const onPortal = async (
    ref: RunRef,
    run: RpaRunRecord,
    session: PortalSession,
    work: typeof fillForm,
    known?: StoredRequest,
  ): Promise<TaskResult> => {
    const request = known ?? (await requests.get(ref.clientId, ref.externalId));
    if (!request) return finish(ref, 'request_not_found');
    try {
      return await work(ref, run, request, session);
    } catch (error) {
      if (!isPortalFailure(error)) throw error;
      return failedOnPortal(ref, session, error.outcome);
    }
  };

  /** The login's result on the account: lastLogin, and attention for a refusal. */
  const recordLogin = async (
    account: StoredPortalAccount,
    outcome: PortalFailureOutcome | 'succeeded',
    runId: string,
  ) => {
    const result = outcome === 'succeeded' ? 'succeeded' : LOGIN_RESULTS[outcome];
    if (!result) return;
    const at = timestamp();
    const reason = outcome === 'succeeded' ? undefined : ATTENTION_OF[outcome];
    await accounts.setLastLogin(
      account.clientId,
      account.externalId,
      { result, at },
      reason && { reason, since: at, runId },
    );
  };

  /** The visit's account, if runs may still use it; the outcome that ends them otherwise. */
  const usableAccount = async (visit: Visit): Promise<StoredPortalAccount | RunOutcome> => {
    const account = await accounts.get(visit.anchor.clientId, visit.portalAccountId);
    const usable =
      account &&
      account.status === 'active' &&
      account.organizationId === visit.anchor.organizationId &&
      deps.driverFor(account.portalId) &&
      deps.portalBaseUrl(account.portalId);
    if (!usable) return 'no_portal_account';
    // The portal refused it before: another login would count towards (or extend) a lockout.
    if (account.attention) return 'account_needs_attention';
    return account;
  };

  /** A step on each live run, once: runs waiting behind a lease do not fill their steps with retries. */
  const noteWaiting = async (refs: RunRef[]) => {
    const waiting = 'waiting for the portal account';
    for (const ref of refs) {
      await changeRun(
        runs,
        ref,
        (run) =>
          isTerminal(run.status) || run.steps.at(-1)?.step === waiting
            ? undefined
            : { ...run, steps: withStep(run.steps, timestamp(), waiting, 'another session is using it') },
        now,
      );
    }
  };

  /**
   * Holds the account's lease while `work` runs, or throws PortalAccountBusy (the state machine tries
   * again later) after noting the wait on the runs. The lease is given back whatever happens.
   */
  const withLease = async <T>(
    clientId: string,
    portalAccountId: string,
    holder: string,
    live: RunRef[],
    work: () => Promise<T>,
  ) => {
    if (!(await leases.acquire(clientId, portalAccountId, holder, LEASE_SECONDS))) {
      await noteWaiting(live);
      throw new PortalAccountBusy();
    }
    try {
      return await work();
    } finally {
      await leases.release(clientId, portalAccountId, holder);
    }
  };

  /**
   * Signs in once with the visit's account and hands the session to `work`. What happens before the
   * session exists ends every live run of the visit alike; undefined then. Called under the lease.
   */
  const visit = async <T>(
    v: Visit,
    invocation: Invocation | undefined,
    work: (session: PortalSession) => Promise<T>,
  ): Promise<T | undefined> => {
    // Read under the lease: a session that just ended may have marked the account.
    const account = await usableAccount(v);
    if (typeof account === 'string') return void (await finishAll(v.live, account));
    return signedIn(v, account, invocation, work);
  };

  const signedIn = async <T>(
    v: Visit,
    account: StoredPortalAccount,
    invocation: Invocation | undefined,
    work: (session: PortalSession) => Promise<T>,
  ): Promise<T | undefined> => {
    let browser: Browser;
    try {
      browser = await deps.launchBrowser();
    } catch (error) {
      if (isPortalFailure(error)) return void (await finishAll(v.live, 'browser_failed'));
      throw error;
    }
    try {
      let session: PortalSession;
      try {
        // Bounded by what the invocation has left at login: past its deadline nobody waits for the answer.
        const left = invocation?.getRemainingTimeInMillis() ?? timeoutMs;
        // The credentials come from the run credentials function, asked with ids only, for the anchor's attempt.
        const credentials = await deps.openCredentials({
          clientId: v.anchor.clientId,
          requestExternalId: v.anchor.externalId,
          runId: v.anchor.runId,
          portalAccountId: account.externalId,
          attempt: v.anchor.steps.filter((step) => step.step === 'started').length,
        });
        session = await deps.driverFor(account.portalId)!.logIn(browser, credentials, {
          baseUrl: deps.portalBaseUrl(account.portalId)!,
          timeoutMs: Math.max(1, Math.min(timeoutMs, left)),
        });
      } catch (error) {
        if (!isPortalFailure(error)) throw error;
        await recordLogin(account, error.outcome, v.anchor.runId);
        if (error.outcome === 'portal_timeout') {
          for (const ref of v.live)
            await addStep(ref, 'the portal did not answer in time; the attempt will be retried');
          throw new PortalUnavailable();
        }
        return void (await finishAll(v.live, error.outcome));
      }
      await recordLogin(account, 'succeeded', v.anchor.runId);
      await addStep(v.anchor, 'logged in');
      try {
        return await work(session);
      } finally {
        await session.close();
      }
    } finally {
      await deps.closeBrowser(browser);
    }
  };

  /** FillPortalForm: one run, one visit; the request is read first, so a deleted one costs no login. */
  const fillPortalForm = async (input: unknown, invocation?: Invocation): Promise<TaskResult> => {
    const ref = runRefOf(input);
    const stored = await runs.getRun(ref);
    if (stored?.kind !== 'view-on-page') throw new RunNotFound();
    if (isTerminal(stored.status)) return resultOf(stored, ref.runId);
    const { portalAccountId } = stored;
    const request = await requests.get(ref.clientId, ref.externalId);
    if (!portalAccountId || !request) return finish(ref, request ? 'no_portal_account' : 'request_not_found');
    return withLease(ref.clientId, portalAccountId, ref.runId, [ref], async () => {
      const run = await start(ref, 'view-on-page');
      if (!run) return resultOf(await runs.getRun(ref), ref.runId);
      const v: Visit = { holder: ref.runId, portalAccountId, live: [ref], anchor: run };
      const result = await visit(v, invocation, (session) => onPortal(ref, run, session, fillForm, request));
      return result ?? resultOf(await runs.getRun(ref), ref.runId);
    });
  };

  /** The group's runs that have not ended, in the batch's order. */
  const liveRunsOf = async (clientId: string, refs: RunRef[]) => {
    const read = await runs.getRuns(
      clientId,
      refs.map(({ externalId, runId }) => ({ externalId, runId })),
    );
    const byId = new Map(read.map((run) => [run.runId, run]));
    return refs.filter((ref) => {
      const run = byId.get(ref.runId);
      return run?.kind === 'check-auth-status' && !isTerminal(run.status);
    });
  };

  /** Looks up the group's runs one after the other in the session, while the invocation has time. */
  const lookUpEach = async (live: RunRef[], session: PortalSession, invocation: Invocation | undefined) => {
    // No further lookup starts unless a slow one (a read and a screenshot) still fits in the invocation,
    // or half of what it had: a Task that times out fails every run of the group still going.
    const lookupReserveMs = Math.min(2 * timeoutMs, (invocation?.getRemainingTimeInMillis() ?? Infinity) / 2);
    let done = 0;
    for (const ref of live) {
      if (done >= lookupsPerInvocation) break;
      // The first always goes (its run was started); another only if a slow answer would still fit.
      if (done > 0 && invocation && invocation.getRemainingTimeInMillis() < lookupReserveMs) break;
      if (done > 0 && pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      // The first run was started before the login; the others start now.
      const run = done === 0 ? await runs.getRun(ref) : await start(ref, 'check-auth-status');
      done++;
      if (run && !isTerminal(run.status)) await onPortal(ref, run, session, readStatus);
    }
    return done;
  };

  /**
   * CheckPortalStatus: a batch's requests on one portal account, in one session (one login), at most
   * `lookupsPerInvocation` of them; the rest are returned for the state machine's next call.
   */
  const checkPortalStatus = async (input: unknown, invocation?: Invocation): Promise<GroupResult> => {
    const { clientId, batchId, portalAccountId } = idsOf(input, ['clientId', 'batchId', 'portalAccountId']) as {
      clientId: string;
      batchId: string;
      portalAccountId: string;
    };
    const refs = refsOf(clientId, (input as AccountGroupInput).items);
    const live = await liveRunsOf(clientId, refs);
    const [first] = live;
    if (!first) return { remaining: [], more: false };
    const holder = `${batchId}#${portalAccountId}`;
    const reached = await withLease(clientId, portalAccountId, holder, live, async () => {
      const anchor = await start(first, 'check-auth-status');
      // Ended meanwhile (its Catch, a duplicate delivery): nothing to do for it; the rest next time.
      if (!anchor) return 1;
      return visit({ holder, portalAccountId, live, anchor }, invocation, (session) =>
        lookUpEach(live, session, invocation),
      );
    });
    const remaining = reached === undefined ? [] : itemsOf(live.slice(reached));
    return { remaining, more: remaining.length > 0 };
  };

  /** Any error but a retry: the runs end `portal_error` here rather than through the Catch. */
  const guarded =
    <I, R>(
      kind: RunKind,
      task: (input: I, invocation?: Invocation) => Promise<R>,
      refsFor: (input: unknown) => RunRef[],
    ) =>
    async (input: I, invocation?: Invocation): Promise<R | TaskResult | GroupResult> => {
      try {
        return await task(input, invocation);
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
        await finishAll(refs, 'portal_error');
        return refs.length === 1 && kind === 'view-on-page'
          ? resultOf(await runs.getRun(refs[0]!), refs[0]!.runId)
          : { remaining: [], more: false };
      }
    };

  return {
    /** FillPortalForm (view-on-page): logs in, fills the form, captures it, stops before submitting. */
    fillPortalForm: guarded('view-on-page', fillPortalForm, (input) => [runRefOf(input)]) as (
      input: unknown,
      invocation?: Invocation,
    ) => Promise<TaskResult>,

    /** CheckPortalStatus (a batch's group): logs in once, reads each status, updates each request's authorization. */
    checkPortalStatus: guarded('check-auth-status', checkPortalStatus, (input) =>
      refsOf((input as AccountGroupInput).clientId, (input as AccountGroupInput).items),
    ) as (input: unknown, invocation?: Invocation) => Promise<GroupResult>,

    ...runRecorder(deps),
  };
};

/** Refs back to the batch's items. */
const itemsOf = (refs: RunRef[]): BatchItem[] =>
  refs.map(({ externalId, runId }) => ({ requestExternalId: externalId, runId }));

export type RpaWorker = ReturnType<typeof rpaWorker>;
