import type { RunKind } from '#lib/entities/rpa';
import { isTerminal, type RunRef, type RunStore } from './run-store.ts';

/** A batch group's runs of `kind` that have not ended, in the batch's order (one BatchGetItem). */
export async function liveRunsOf(
  runs: Pick<RunStore, 'getRuns'>,
  clientId: string,
  refs: RunRef[],
  kind: RunKind,
): Promise<RunRef[]> {
  const read = await runs.getRuns(
    clientId,
    refs.map(({ externalId, runId }) => ({ externalId, runId })),
  );
  const byId = new Map(read.map((run) => [run.runId, run]));
  return refs.filter((ref) => {
    const run = byId.get(ref.runId);
    return run?.kind === kind && !isTerminal(run.status);
  });
}
