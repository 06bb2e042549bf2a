import type { AuthorizationChange } from '#lib/entities/authorization-history';
import type { DecisionDeadline } from '#lib/entities/decision-deadline';
import type { StoredRequest } from '#lib/entities/request';
import { newEvent } from '#lib/events/events';
import { uuidv7 } from '#lib/ids';
import { log } from '#lib/observability/logger';
import { isWatched } from '#lib/requests/authorization-changes';
import type { RequestStore } from '#lib/requests/request-store';
import type { DeadlineStore } from './deadline-store.ts';
import { recheckShards } from './recheck-shards.ts';

/*
 * Decision deadlines that passed (docs/payer-api.md, "Decision deadlines"), run by the re-check dispatcher at
 * each of its selections: reads the passed ones from each shard of their index (no Scan) and, for a request
 * still undecided, writes in one transaction the deadline's removal (conditional: with two dispatchers it
 * fires once), a history entry saying it passed and the `authorization.decision_overdue` event. Ids, times and
 * statuses only: nothing of the request's content.
 */

export interface DeadlineDependencies {
  store: DeadlineStore;
  requests: Pick<RequestStore, 'get'>;
}

/** The history entry and the event of a deadline that passed on `request`: the state as it is, twice. */
export const overdueOf = (request: StoredRequest, deadline: DecisionDeadline, at: string) => {
  const { clientId, externalId } = request;
  const { status, number, decisionDate } = request.authorization;
  const state = { status, number, decisionDate };
  const entry: AuthorizationChange = {
    clientId,
    externalId,
    changeId: uuidv7(Date.parse(at)),
    changedAt: at,
    previous: state,
    current: state,
    changedBy: { kind: 'deadline', decisionDueAt: deadline.decisionDueAt },
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  const event = newEvent('authorization.decision_overdue', clientId, at, {
    requestExternalId: externalId,
    decisionDueAt: deadline.decisionDueAt,
    status,
  });
  return { entry, event };
};

/** Fires one passed deadline, or ends one that no longer stands (the request gone, decided, or given another). */
async function fireOne({ store, requests }: DeadlineDependencies, deadline: DecisionDeadline, at: string) {
  const request = await requests.get(deadline.clientId, deadline.externalId);
  const stands =
    request && isWatched(request.authorization) && request.authorization.decisionDueAt === deadline.decisionDueAt;
  if (!stands) {
    await store.end(deadline);
    return false;
  }
  return store.fire(deadline, overdueOf(request, deadline, at));
}

/** The deadlines passed at `at`, each fired once; whether some shard had more than one read takes. */
export async function fireOverdue(deps: DeadlineDependencies, at: string, perShard: number) {
  const reads = await Promise.all(recheckShards.map((shard) => deps.store.due(shard, at, perShard)));
  const due = reads.flat();
  let fired = 0;
  for (const deadline of due) if (await fireOne(deps, deadline, at)) fired += 1;
  // Nothing due is the common tick: no line for it.
  if (due.length > 0) log.info('Decision deadlines passed', { due: due.length, fired });
  return { more: reads.some((read) => read.length === perShard) };
}
