import type { RpaRunRecord } from '#lib/entities/rpa';
import type { RunStore } from '#lib/runs/run-store';

/*
 * A request's submissions as the payer holds them: the latest one the payer took (a `submit` run that
 * was sent and ended `submitted`) is what an update or a cancel replaces. Runs sort newest first by id;
 * re-checks add runs too, so this many of the latest are read.
 */
const RUNS_READ = 100;

const taken = (run: RpaRunRecord) => run.kind === 'submit' && !!run.submission?.sentAt && run.outcome === 'submitted';

/** The latest submission the payer took, if any. */
export async function latestTakenSubmission(
  runs: Pick<RunStore, 'latestRuns'>,
  clientId: string,
  externalId: string,
): Promise<RpaRunRecord | undefined> {
  return (await runs.latestRuns(clientId, externalId, RUNS_READ)).find(taken);
}

/** The taken submission whose claim identifier is `claimIdentifier`. */
export async function takenSubmissionOf(
  runs: Pick<RunStore, 'latestRuns'>,
  clientId: string,
  externalId: string,
  claimIdentifier: string,
): Promise<RpaRunRecord | undefined> {
  return (await runs.latestRuns(clientId, externalId, RUNS_READ)).find(
    (run) => taken(run) && run.submission!.bundleIdentifier === claimIdentifier,
  );
}
