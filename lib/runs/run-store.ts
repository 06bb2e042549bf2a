import type { RpaBatchRecord, RpaRunRecord, RunOutcome, RunStatus } from '#lib/entities/rpa';
import type { ServiceEvent } from '#lib/entities/service-event';

/** The outcomes of a run that ends `succeeded`; every other one fails it. */
export const SUCCESSFUL_OUTCOMES: readonly RunOutcome[] = [
  'form_filled',
  'status_read',
  'not_found_on_portal',
  'submitted',
  'not_found_at_payer',
];

export const isTerminal = (status: RunStatus) => status === 'succeeded' || status === 'failed';

/** Port: automation runs and check-auth-status batches (docs/rpa.md, "Data"). */
export interface RunRef {
  clientId: string;
  externalId: string;
  runId: string;
}

export interface RunStore {
  getRun(ref: RunRef): Promise<RpaRunRecord | undefined>;
  /** The request's latest runs, newest first. */
  latestRuns(clientId: string, externalId: string, limit: number): Promise<RpaRunRecord[]>;
  /** The runs these refs name (of one client), in no particular order; missing ones are left out. At most 100. */
  getRuns(clientId: string, refs: ReadonlyArray<Omit<RunRef, 'clientId'>>): Promise<RpaRunRecord[]>;
  /** Writes version 1; throws VersionConflict when the run exists. */
  createRun(run: RpaRunRecord): Promise<void>;
  /**
   * Writes `run` if the stored version is still `run.version - 1`; else throws VersionConflict. The
   * events the write makes happen (a run that finished) go to the outbox in the same transaction.
   */
  updateRun(run: RpaRunRecord, events?: readonly ServiceEvent[]): Promise<void>;

  getBatch(clientId: string, batchId: string): Promise<RpaBatchRecord | undefined>;
  createBatch(batch: RpaBatchRecord): Promise<void>;
  /** As updateRun, for a batch (and the event of one that finished). */
  updateBatch(batch: RpaBatchRecord, events?: readonly ServiceEvent[]): Promise<void>;
}
