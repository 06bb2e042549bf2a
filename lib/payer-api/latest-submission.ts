import type { RpaRunRecord } from '#lib/entities/rpa';
import { isTerminal, type RunStore } from '#lib/runs/run-store';

/*
 * A request's submissions as the payer may hold them: one sent and not refused by the payer (a refused
 * one made no claim; one that ended unavailable may have reached it) is what an update or a cancel
 * replaces (an update here, a cancel by cancel-start.ts). Runs sort newest first by id; re-checks add
 * runs too, so this many of the latest are read.
 */
const RUNS_READ = 50;

const held = (run: RpaRunRecord) =>
  run.kind === 'submit' && !!run.submission?.sentAt && run.outcome !== 'payer_refused';

/**
 * The latest submission the payer may hold, if any; and a `submit` run of the request that has not ended
 * (its claim may not exist at the payer yet, so another submission cannot know what it replaces).
 */
export async function latestSubmissions(
  runs: Pick<RunStore, 'latestRuns'>,
  clientId: string,
  externalId: string,
): Promise<{ held: RpaRunRecord | undefined; live: RpaRunRecord | undefined }> {
  const latest = await runs.latestRuns(clientId, externalId, RUNS_READ);
  return {
    held: latest.find(held),
    live: latest.find((run) => run.kind === 'submit' && !isTerminal(run.status)),
  };
}

const actionOf = (run: RpaRunRecord) => run.submission?.action ?? 'claim';

/**
 * What a cancel replaces: the latest claim or claim update the payer may hold (a cancel is not one); and a
 * cancel of the request that has not ended (a second one waits for it).
 */
export async function cancellableClaim(
  runs: Pick<RunStore, 'latestRuns'>,
  clientId: string,
  externalId: string,
): Promise<{ claim: RpaRunRecord | undefined; cancelling: RpaRunRecord | undefined }> {
  const latest = await runs.latestRuns(clientId, externalId, RUNS_READ);
  return {
    claim: latest.find((run) => held(run) && actionOf(run) !== 'cancel'),
    cancelling: latest.find((run) => run.kind === 'submit' && actionOf(run) === 'cancel' && !isTerminal(run.status)),
  };
}

/** The sent submission whose claim identifier is `claimIdentifier`. */
export async function sentSubmissionOf(
  runs: Pick<RunStore, 'latestRuns'>,
  clientId: string,
  externalId: string,
  claimIdentifier: string,
): Promise<RpaRunRecord | undefined> {
  return (await runs.latestRuns(clientId, externalId, RUNS_READ)).find(
    (run) => run.kind === 'submit' && !!run.submission?.sentAt && run.submission.bundleIdentifier === claimIdentifier,
  );
}
