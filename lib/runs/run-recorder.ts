import type { BatchItem, RpaRunRecord, RunOutcome, RunStatus } from '#lib/entities/rpa';
import { log } from '#lib/observability/logger';
import { recordAutomationRun } from '#lib/observability/metrics';
import type { AutomationQuotaService } from './automation-quotas.ts';
import { InvalidTaskInput, RunNotFound } from './errors.ts';
import { changeRun, closeBatch, statusOfOutcome, withStep } from './run-changes.ts';
import { runFinishedEvents } from './run-events.ts';
import { isTerminal, type RunRef, type RunStore } from './run-store.ts';

/*
 * How automation runs end, shared by every task that ends one (docs/rpa.md): the fixed step and
 * outcome a run ends with, never overwriting one that ended; the recorders of the state machines
 * (RecordRunFailure: the Catch of the browser tasks; FinishBatch); and the task inputs they read (ids
 * only). The browser worker (worker.ts) ends runs through the same finisher.
 */

interface RunTaskInput {
  clientId: string;
  requestExternalId: string;
  runId: string;
  batchId?: string;
}

/** The Catch's error, as the state machine passes it: its name, or `{Error, Cause}`; one run or a group's. */
interface RecordFailureInput extends Partial<RunTaskInput> {
  clientId: string;
  items?: BatchItem[];
  error?: string | { Error?: string; Cause?: string };
}

export interface TaskResult {
  runId: string;
  status: RunStatus | null;
  outcome: RunOutcome | null;
}

/** The step each outcome ends a run with: our words, never the portal's. */
export const OUTCOME_STEPS: Record<RunOutcome, string> = {
  form_filled: 'form filled; stopped before submitting',
  status_read: 'authorization status read; request updated',
  not_found_on_portal: 'the portal does not know this request; request updated',
  wrong_password: 'the portal refused the credentials',
  account_locked: 'the portal account is locked',
  mfa_required: 'the portal asks for a one-time code the account has no secret for',
  no_portal_account: "the run's portal account is gone, disabled or no longer the organization's",
  account_needs_attention: 'the portal refused this account before; it needs new credentials or to be set active',
  portal_account_busy: 'the portal account stayed in another automation session too long',
  portal_timeout: 'the portal did not answer in time',
  request_not_found: 'the request does not exist',
  browser_failed: 'the browser did not start',
  portal_error: 'the portal answered in a way the automation did not expect',
  browser_busy: 'every browser worker stayed busy for as long as the run waited for one',
  execution_timed_out: 'the execution timed out before the run ended',
  execution_aborted: 'the execution was stopped before the run ended',
  execution_lost: 'the execution ended or vanished without recording how the run ended',
  credentials_refused:
    "the credentials were refused: the run credentials function's for a portal account, or the payer's token endpoint for a payer connection",
  unexpected_origin: 'the portal led the browser outside its registered origins; the session was ended',
  submitted: "the payer's API answered the submission; request updated",
  payer_refused: "the payer's API refused the request (its error codes are in the run's steps)",
  payer_unavailable: "the payer's API did not answer in time or stayed unavailable through every retry",
  payer_error: "the payer's API answered in a way the automation did not expect",
  not_found_at_payer: "the payer's API does not know this request; request updated",
  no_payer_connection: "the run's payer connection is gone, disabled or needs attention, or its payer has no API",
  request_not_mappable: 'the request lacks fields the payer API needs (their paths are in the steps)',
};

/**
 * What a Catch's error means for a run of the payer-API channel: its task timed out (the payer or the
 * token function did not answer in time) or failed otherwise; never a portal's outcome.
 */
const payerOutcomeOf = (name: string | undefined): RunOutcome =>
  name === 'States.Timeout' || name === 'Lambda.ClientExecutionTimeoutException' ? 'payer_unavailable' : 'payer_error';

/** The outcome of a run its task failed for good with the error `name`, by the run's channel. */
const failureOutcomeOf =
  (name: string | undefined) =>
  (run: RpaRunRecord): RunOutcome =>
    run.channel === 'pas' ? payerOutcomeOf(name) : (name && OUTCOME_OF_ERROR[name]) || 'portal_error';

/** A run its batch's group left unfinished: `portal_error`, or `payer_error` on the payer-API channel. */
const unfinishedOutcomeOf = (run: RpaRunRecord): RunOutcome => (run.channel === 'pas' ? 'payer_error' : 'portal_error');

/** The Catch's error names that say what happened on the portal channel; any other is `portal_error`. */
const OUTCOME_OF_ERROR: Record<string, RunOutcome> = {
  PortalUnavailable: 'portal_timeout',
  PortalAccountBusy: 'portal_account_busy',
  'States.Timeout': 'portal_timeout',
  'States.HeartbeatTimeout': 'portal_timeout',
  'Lambda.ClientExecutionTimeoutException': 'portal_timeout',
  // The browser function's reserved concurrency was used up for as long as the Task retried.
  'Lambda.TooManyRequestsException': 'browser_busy',
};

export const idsOf = (input: unknown, names: readonly string[]): Record<string, string> => {
  const record = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  return Object.fromEntries(
    names.map((name) => {
      const value = record[name];
      if (typeof value !== 'string' || value === '') throw new InvalidTaskInput(name);
      return [name, value];
    }),
  );
};

export const runRefOf = (input: unknown): RunRef => {
  const { clientId, requestExternalId, runId } = idsOf(input, ['clientId', 'requestExternalId', 'runId']);
  return { clientId: clientId!, externalId: requestExternalId!, runId: runId! };
};

/** The runs a group's items name; an item that is not `{requestExternalId, runId}` is InvalidTaskInput. */
export const refsOf = (clientId: string, items: unknown): RunRef[] => {
  if (!Array.isArray(items)) throw new InvalidTaskInput('items');
  return items.map((item) => {
    const { requestExternalId, runId } = idsOf(item, ['requestExternalId', 'runId']);
    return { clientId, externalId: requestExternalId!, runId: runId! };
  });
};

/** A run's end, as a task returns it. */
export const resultOf = (run: RpaRunRecord | undefined, runId: string): TaskResult => ({
  runId,
  status: run?.status ?? null,
  outcome: run?.outcome ?? null,
});

/** What the recorders need: no browser, portal, credentials or screenshots (recorder-service.ts). */
export interface RecorderDependencies {
  runs: RunStore;
  now?: () => Date;
  /** The client's runs in flight (automation-quotas.ts): an execution whose runs ended lands. */
  flights?: Pick<AutomationQuotaService, 'landed'>;
}

/**
 * Ends a run with `outcome` (unless it already ended: a task delivered twice records once); an outcome
 * that depends on the run (its channel) is a function of the run as it is read.
 */
export const finisherOf =
  ({ runs, now = () => new Date(), flights }: RecorderDependencies) =>
  async (
    ref: RunRef,
    outcomeOf: RunOutcome | ((run: RpaRunRecord) => RunOutcome),
    change: Partial<RpaRunRecord> = {},
  ) => {
    const ended = (current: RpaRunRecord) => {
      const outcome = typeof outcomeOf === 'function' ? outcomeOf(current) : outcomeOf;
      return {
        ...current,
        ...change,
        status: statusOfOutcome(outcome),
        outcome,
        steps: withStep(current.steps, now().toISOString(), OUTCOME_STEPS[outcome], outcome),
      };
    };
    const run = await changeRun(
      runs,
      ref,
      (current) => (isTerminal(current.status) ? undefined : ended(current)),
      now,
      // The run's end and its event, in one write: a run that had ended already is not written again.
      runFinishedEvents,
    );
    log.info('Automation run ended', { runId: ref.runId, kind: run?.kind, outcome: run?.outcome });
    // A view-on-page or submit run is its own execution: it no longer counts as in flight (a batch lands in FinishBatch).
    if (run && run.kind !== 'check-auth-status' && isTerminal(run.status))
      await flights?.landed(ref.clientId, ref.runId);
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
    recordRunFailure: async (input: unknown): Promise<TaskResult | { outcome: RunOutcome; runs: number }> => {
      const error = (input as RecordFailureInput | null)?.error;
      const name = typeof error === 'string' ? error : error?.Error;
      const outcome = failureOutcomeOf(name);
      const items = (input as RecordFailureInput | null)?.items;
      if (!Array.isArray(items)) {
        const ref = runRefOf(input);
        log.warn('Automation task failed', { runId: ref.runId, errorName: name?.slice(0, 100) });
        return finish(ref, outcome);
      }
      // A batch's group: every run of it that has not ended fails with the group's error.
      const { clientId, batchId } = idsOf(input, ['clientId', 'batchId']) as { clientId: string; batchId: string };
      log.warn('Automation task failed', { batchId, total: items.length, errorName: name?.slice(0, 100) });
      const ended = [];
      for (const item of refsOf(clientId, items)) ended.push(await finish(item, outcome));
      return { outcome: ended[0]?.outcome ?? 'portal_error', runs: items.length };
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
        await finish({ clientId, externalId: run.externalId, runId: run.runId }, unfinishedOutcomeOf);
      }
      const finished = await closeBatch(runs, clientId, batchId, now);
      log.info('Automation batch finished', { batchId, total: batch.items.length });
      await deps.flights?.landed(clientId, batchId);
      return { batchId, status: finished?.status ?? 'done' };
    },
  };
};
