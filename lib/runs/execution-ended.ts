import type { RpaBatchRecord, RunOutcome } from '#lib/entities/rpa';
import { log } from '#lib/observability/logger';
import type { AutomationMachine, ExecutionStatus } from './automation-starter.ts';
import { InvalidTaskInput } from './errors.ts';
import { closeBatch } from './run-changes.ts';
import { finisherOf, type RecorderDependencies } from './run-recorder.ts';
import { isTerminal, type RunRef } from './run-store.ts';

/*
 * No run is left hanging (docs/rpa.md): an execution that ends without having recorded its runs'
 * outcomes (it timed out as a whole, was stopped, failed in its recorder, or is gone) fails them
 * with an outcome of its own. Three callers: the
 * RecordExecutionEnded function (on AWS, an EventBridge rule on the state machines'
 * execution-status events; locally the Step Functions stand-in hands it the same event), the API's
 * reads of a run or a batch (rpa.ts), and the local stack's start (whose stand-in forgot every
 * execution). Every write is conditional: a run that ended stays as it ended.
 */

/** Execution statuses Step Functions reports when an execution has ended. */
const ENDED_EXECUTION_STATUSES = ['TIMED_OUT', 'ABORTED', 'FAILED'] as const;
type EndedExecutionStatus = (typeof ENDED_EXECUTION_STATUSES)[number];

/**
 * The outcome a run is failed with when its execution is in `status` (undefined: the execution does
 * not exist) without the run having ended; undefined while the execution may still record it.
 * SUCCEEDED cannot leave a run unended (every task records before it returns, FinishBatch fails
 * the rest), so it says the same as a failure nobody recorded.
 */
export const outcomeOfExecution = (status: ExecutionStatus | undefined): RunOutcome | undefined => {
  switch (status) {
    case 'RUNNING':
    case 'PENDING_REDRIVE':
      return undefined;
    case 'TIMED_OUT':
      return 'execution_timed_out';
    case 'ABORTED':
      return 'execution_aborted';
    default:
      return 'execution_lost';
  }
};

/** What RecordExecutionEnded reads of an EventBridge "Step Functions Execution Status Change" event. */
interface ExecutionStatusChange {
  name: string;
  stateMachineArn: string;
  status: EndedExecutionStatus;
  /** The execution's input: ids only (lib/runs/state-machines.ts). */
  input: Record<string, unknown>;
}

export interface ExecutionEndedDependencies extends RecorderDependencies {
  /** Which of the automation's state machines an ARN names (configuration); undefined for any other. */
  machineOf: (stateMachineArn: string) => AutomationMachine | undefined;
}

const textAt = (record: Record<string, unknown>, name: string) => {
  const value = record[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** The event's detail, or why it is not one this function records (never its input: ids, still not logged). */
const statusChangeOf = (event: unknown): ExecutionStatusChange | string => {
  const detail = (event as { detail?: unknown } | null)?.detail;
  if (typeof detail !== 'object' || detail === null) return 'no detail';
  const fields = detail as Record<string, unknown>;
  const name = textAt(fields, 'name');
  const stateMachineArn = textAt(fields, 'stateMachineArn');
  const status = textAt(fields, 'status');
  if (!name || !stateMachineArn) return 'no execution name or state machine';
  if (!ENDED_EXECUTION_STATUSES.includes(status as EndedExecutionStatus)) return 'not an ended execution';
  let input: unknown;
  try {
    input = JSON.parse(textAt(fields, 'input') ?? '');
  } catch {
    return 'no input';
  }
  if (typeof input !== 'object' || input === null) return 'no input';
  return { name, stateMachineArn, status: status as EndedExecutionStatus, input: input as Record<string, unknown> };
};

const idsOf = (input: Record<string, unknown>, names: readonly string[]) =>
  names.map((name) => {
    const value = textAt(input, name);
    if (!value) throw new InvalidTaskInput(name);
    return value;
  });

/** Fails the runs an ended (or lost) execution left unended: one run, or a batch's. */
export const runEnder = (deps: RecorderDependencies) => {
  const { runs } = deps;
  const now = deps.now ?? (() => new Date());
  const finish = finisherOf(deps);

  /** Fails one run that has not ended; whether it did. */
  const endRun = async (ref: RunRef, outcome: RunOutcome) => {
    const run = await runs.getRun(ref);
    if (!run || isTerminal(run.status)) return false;
    return (await finish(ref, outcome)).outcome === outcome;
  };

  /** Fails a batch's runs that have not ended and closes it; the batch as it is then. */
  const endBatch = async (
    clientId: string,
    batchId: string,
    outcome: RunOutcome,
  ): Promise<{ batch: RpaBatchRecord | undefined; ended: number }> => {
    const batch = await runs.getBatch(clientId, batchId);
    if (!batch) return { batch, ended: 0 };
    const read = await runs.getRuns(
      clientId,
      batch.items.map((item) => ({ externalId: item.requestExternalId, runId: item.runId })),
    );
    let ended = 0;
    for (const run of read.filter((candidate) => !isTerminal(candidate.status))) {
      if (await endRun({ clientId, externalId: run.externalId, runId: run.runId }, outcome)) ended++;
    }
    const closed = await closeBatch(runs, clientId, batchId, now);
    return { batch: closed, ended };
  };

  return { endRun, endBatch };
};

export const executionEndedRecorder = (deps: ExecutionEndedDependencies) => {
  const { endRun, endBatch } = runEnder(deps);

  return {
    /**
     * RecordExecutionEnded: an execution of one of our state machines timed out, was aborted or failed.
     * Its name is the run's (view-on-page, submit) or the batch's id, its input names the client. An event
     * that is not one of ours is logged and dropped (a retry would not change it).
     */
    recordExecutionEnded: async (event: unknown) => {
      const change = statusChangeOf(event);
      const machine = typeof change === 'string' ? undefined : deps.machineOf(change.stateMachineArn);
      if (typeof change === 'string' || !machine) {
        log.warn('Execution status change ignored', { context: typeof change === 'string' ? change : 'not ours' });
        return { ended: 0 };
      }
      const outcome = outcomeOfExecution(change.status)!;
      if (machine === 'view-on-page' || machine === 'submit') {
        const [clientId, externalId, runId] = idsOf(change.input, ['clientId', 'requestExternalId', 'runId']);
        if (runId !== change.name) throw new InvalidTaskInput('runId');
        const ended = await endRun({ clientId: clientId!, externalId: externalId!, runId }, outcome);
        log.info('Execution ended', { runId, status: change.status, total: ended ? 1 : 0 });
        return { ended: ended ? 1 : 0 };
      }
      const [clientId, batchId] = idsOf(change.input, ['clientId', 'batchId']);
      if (batchId !== change.name) throw new InvalidTaskInput('batchId');
      const { ended } = await endBatch(clientId!, batchId, outcome);
      log.info('Execution ended', { batchId, status: change.status, total: ended });
      return { ended };
    },
  };
};
