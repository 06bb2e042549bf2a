import { randomBytes } from 'node:crypto';
import { retryOnConflict } from '#lib/concurrency';
import {
  type RpaBatchRecord,
  type RpaRunRecord,
  type RunOutcome,
  type RunRef,
  type RunStatus,
  type RunStep,
  type RunStore,
  SUCCESSFUL_OUTCOMES,
} from './run-store.ts';

/** Steps a run keeps: the first ones, and always the latest (which says how it ended). */
export const MAX_RUN_STEPS = 50;
/** A step's detail is ours, short: ids, a label, a count. */
const MAX_STEP_DETAIL = 200;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Run ids sort by creation
 * time, so a request's latest runs are one Query in reverse key order.
 */
export const uuidv7 = (milliseconds = Date.now(), random: Buffer = randomBytes(10)): string => {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(milliseconds, 0, 6);
  random.copy(bytes, 6, 0, 10);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

export const withStep = (steps: readonly RunStep[], at: string, step: string, detail?: string): RunStep[] => {
  const next: RunStep = { at, step, ...(detail ? { detail: detail.slice(0, MAX_STEP_DETAIL) } : {}) };
  return steps.length < MAX_RUN_STEPS ? [...steps, next] : [...steps.slice(0, MAX_RUN_STEPS - 1), next];
};

export const statusOfOutcome = (outcome: RunOutcome): RunStatus =>
  SUCCESSFUL_OUTCOMES.includes(outcome) ? 'succeeded' : 'failed';

/** Read-modify-write of one run until no other writer interleaves; undefined when the run is gone. */
export const changeRun = (
  runs: Pick<RunStore, 'getRun' | 'updateRun'>,
  ref: RunRef,
  change: (run: RpaRunRecord) => Omit<RpaRunRecord, 'version' | 'updatedAt'> | undefined,
  now: () => Date = () => new Date(),
): Promise<RpaRunRecord | undefined> =>
  retryOnConflict(
    async () => {
      const current = await runs.getRun(ref);
      if (!current) return undefined;
      const changed = change(current);
      if (!changed) return current;
      const next: RpaRunRecord = { ...changed, version: current.version + 1, updatedAt: now().toISOString() };
      await runs.updateRun(next);
      return next;
    },
    { attempts: 8 },
  );

/** The same for a batch. */
export const changeBatch = (
  runs: Pick<RunStore, 'getBatch' | 'updateBatch'>,
  clientId: string,
  batchId: string,
  change: (batch: RpaBatchRecord) => Omit<RpaBatchRecord, 'version' | 'updatedAt'> | undefined,
  now: () => Date = () => new Date(),
): Promise<RpaBatchRecord | undefined> =>
  retryOnConflict(
    async () => {
      const current = await runs.getBatch(clientId, batchId);
      if (!current) return undefined;
      const changed = change(current);
      if (!changed) return current;
      const next: RpaBatchRecord = { ...changed, version: current.version + 1, updatedAt: now().toISOString() };
      await runs.updateBatch(next);
      return next;
    },
    { attempts: 8 },
  );

/** Marks a batch `done` (once: a batch already done is left as it is); the batch as it is then. */
export const closeBatch = (
  runs: Pick<RunStore, 'getBatch' | 'updateBatch'>,
  clientId: string,
  batchId: string,
  now: () => Date = () => new Date(),
) =>
  changeBatch(
    runs,
    clientId,
    batchId,
    (current) =>
      current.status === 'done' ? undefined : { ...current, status: 'done', finishedAt: now().toISOString() },
    now,
  );
