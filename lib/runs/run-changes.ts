import { retryOnConflict } from '#lib/concurrency';
import type { RpaBatchRecord, RpaRunRecord, RunOutcome, RunStatus, RunStep } from '#lib/entities/rpa';
import type { ServiceEvent } from '#lib/entities/service-event';
import { batchFinishedEvent } from './run-events.ts';
import { isTerminal, type RunRef, type RunStore, SUCCESSFUL_OUTCOMES } from './run-store.ts';

/** Steps a run keeps: the first ones, and always the latest (which says how it ended). */
export const MAX_RUN_STEPS = 50;
/** A step's detail is ours, short: ids, a label, a count. */
const MAX_STEP_DETAIL = 200;

export const withStep = (steps: readonly RunStep[], at: string, step: string, detail?: string): RunStep[] => {
  const next: RunStep = { at, step, ...(detail ? { detail: detail.slice(0, MAX_STEP_DETAIL) } : {}) };
  return steps.length < MAX_RUN_STEPS ? [...steps, next] : [...steps.slice(0, MAX_RUN_STEPS - 1), next];
};

export const statusOfOutcome = (outcome: RunOutcome): RunStatus =>
  SUCCESSFUL_OUTCOMES.includes(outcome) ? 'succeeded' : 'failed';

/**
 * Read-modify-write of one run until no other writer interleaves; undefined when the run is gone.
 * `eventsOf` says what the written run tells the client (outbox items of the same transaction).
 */
export const changeRun = (
  runs: Pick<RunStore, 'getRun' | 'updateRun'>,
  ref: RunRef,
  change: (run: RpaRunRecord) => Omit<RpaRunRecord, 'version' | 'updatedAt'> | undefined,
  now: () => Date = () => new Date(),
  eventsOf: (run: RpaRunRecord) => ServiceEvent[] = () => [],
): Promise<RpaRunRecord | undefined> =>
  retryOnConflict(
    async () => {
      const current = await runs.getRun(ref);
      if (!current) return undefined;
      const changed = change(current);
      if (!changed) return current;
      const next: RpaRunRecord = { ...changed, version: current.version + 1, updatedAt: now().toISOString() };
      await runs.updateRun(next, eventsOf(next));
      return next;
    },
    { attempts: 8 },
  );

/**
 * A step of a run still going. A run that has ended stays as it ended: an attempt that goes on after its
 * task timed out (the recorder failed the run meanwhile) writes nothing more on it.
 */
export const stepOnRun = (
  runs: Pick<RunStore, 'getRun' | 'updateRun'>,
  now: () => Date,
  ref: RunRef,
  step: string,
  detail?: string,
  change: Partial<RpaRunRecord> = {},
): Promise<RpaRunRecord | undefined> =>
  changeRun(
    runs,
    ref,
    (run) =>
      isTerminal(run.status)
        ? undefined
        : { ...run, ...change, steps: withStep(run.steps, now().toISOString(), step, detail) },
    now,
  );

/** The same for a batch. */
export const changeBatch = (
  runs: Pick<RunStore, 'getBatch' | 'updateBatch'>,
  clientId: string,
  batchId: string,
  change: (batch: RpaBatchRecord) => Omit<RpaBatchRecord, 'version' | 'updatedAt'> | undefined,
  now: () => Date = () => new Date(),
  eventsOf: (batch: RpaBatchRecord) => ServiceEvent[] = () => [],
): Promise<RpaBatchRecord | undefined> =>
  retryOnConflict(
    async () => {
      const current = await runs.getBatch(clientId, batchId);
      if (!current) return undefined;
      const changed = change(current);
      if (!changed) return current;
      const next: RpaBatchRecord = { ...changed, version: current.version + 1, updatedAt: now().toISOString() };
      await runs.updateBatch(next, eventsOf(next));
      return next;
    },
    { attempts: 8 },
  );

/**
 * Marks a batch `done` (once: a batch already done is left as it is), with its
 * `automation.batch_finished` event in the same write; the batch as it is then. Its runs are read
 * first, for the event's counts: every caller has ended them by now.
 */
export const closeBatch = async (
  runs: Pick<RunStore, 'getBatch' | 'getRuns' | 'updateBatch'>,
  clientId: string,
  batchId: string,
  now: () => Date = () => new Date(),
) => {
  const batch = await runs.getBatch(clientId, batchId);
  if (!batch || batch.status === 'done') return batch;
  const ended = await runs.getRuns(
    clientId,
    batch.items.map((item) => ({ externalId: item.requestExternalId, runId: item.runId })),
  );
  return changeBatch(
    runs,
    clientId,
    batchId,
    (current) =>
      current.status === 'done' ? undefined : { ...current, status: 'done', finishedAt: now().toISOString() },
    now,
    (closed) => [batchFinishedEvent(closed, ended)],
  );
};
