import type { RecheckThrough, ScheduledRecheck } from '#lib/entities/recheck';
import type { StoredRequest } from '#lib/entities/request';
import { DomainError } from '#lib/errors';
import { log } from '#lib/observability/logger';
import type { RequestStore } from '#lib/requests/request-store';
import { InvalidTaskInput, RequestsNotAutomatable, RequestsNotFound } from '#lib/runs/errors';
import { idsOf } from '#lib/runs/run-recorder';
import type { RefusedRequest } from '#lib/runs/run-start';
import { MAX_BATCH_REQUESTS as MAX_BATCH_ITEMS } from '#lib/validation/schemas/rpa';
import type { DeadlineStore } from './deadline-store.ts';
import { fireOverdue } from './decision-deadlines.ts';
import {
  expired,
  firstIntervalFor,
  intervalSeconds,
  isUndecided,
  MAX_RECHECK_INTERVAL_SECONDS,
  type RecheckSettings,
  secondsAfter,
} from './recheck-policy.ts';
import { recheckShards } from './recheck-shards.ts';
import type { RecheckStore } from './recheck-store.ts';
import { throughInputOf, throughOf } from './recheck-through.ts';

/*
 * The re-check dispatcher (docs/rechecks.md): the state machine's two tasks, and the local timer's.
 * selectDue reads what is due from each shard of the index, moves each re-check on to its next
 * back-off step before anything starts (a crash skips one re-check, it never repeats one), and
 * groups the requests by client user and the account or connection that read them; startGroup starts
 * one partial check-auth-status batch per group, as that client user would: a request that cannot be
 * started is logged and left to its next step, and the others start. Ids only, in and out: executions
 * carry no PHI.
 */

/** One batch to start: a client user's due requests read through one portal account or payer connection. */
export interface RecheckGroup {
  clientId: string;
  organizationId: string;
  clientUserId: string;
  /** What the re-checks keep while it is usable (lib/runs/channel-choice.ts); absent: the choice rules choose. */
  through?: RecheckThrough;
  requestExternalIds: string[];
}

/** A due re-check to run now, and what it runs through. */
export interface DueRecheck {
  recheck: ScheduledRecheck;
  through: RecheckThrough | undefined;
}

export interface DueSelection {
  groups: RecheckGroup[];
  /** Some shard had more due than one read takes: select again. */
  more: boolean;
}

export interface RecheckDependencies {
  store: RecheckStore;
  /** The decision deadlines, fired at each selection when they pass (./decision-deadlines.ts). */
  deadlines?: DeadlineStore;
  requests: Pick<RequestStore, 'get'>;
  settingsOf: (clientId: string) => Promise<RecheckSettings>;
  /**
   * Starts a partial check-auth-status batch as the group's client user: its id, and the requests it
   * refused. A domain error refuses the group (nothing could start).
   */
  startBatch: (group: RecheckGroup) => Promise<{ batchId: string; refused: RefusedRequest[] }>;
  /** Due re-checks read per shard and selection. */
  perShard?: number;
  now?: () => Date;
}

/** What a due re-check comes to: started again, paused (re-checks off), or over. */
type Decision = 'recheck' | 'pause' | 'end';

const DEFAULT_PER_SHARD = 50;

const throughKey = (through: RecheckThrough | undefined) => {
  if (!through) return '';
  return through.channel === 'portal' ? `portal\n${through.portalAccountId}` : `pas\n${through.payerConnectionId}`;
};

const groupKey = ({ recheck, through }: DueRecheck) =>
  [recheck.clientId, recheck.organizationId, recheck.clientUserId, throughKey(through)].join('\n');

/** The re-checks grouped by client user and account or connection, each group at most a batch long. */
export const groupsOf = (due: readonly DueRecheck[]): RecheckGroup[] => {
  const byKey = new Map<string, DueRecheck[]>();
  for (const member of due) byKey.set(groupKey(member), [...(byKey.get(groupKey(member)) ?? []), member]);
  return [...byKey.values()].flatMap((members) => {
    const { recheck, through } = members[0]!;
    const { clientId, organizationId, clientUserId } = recheck;
    const groups: RecheckGroup[] = [];
    for (let i = 0; i < members.length; i += MAX_BATCH_ITEMS) {
      const requestExternalIds = members.slice(i, i + MAX_BATCH_ITEMS).map((member) => member.recheck.externalId);
      groups.push({ clientId, organizationId, clientUserId, ...(through ? { through } : {}), requestExternalIds });
    }
    return groups;
  });
};

/** Whether the request still needs a re-check, and whether its client wants one now. */
const decide = (
  request: StoredRequest | undefined,
  recheck: ScheduledRecheck,
  at: string,
  settings: RecheckSettings,
): Decision => {
  if (!request || !isUndecided(request.authorization.status) || expired(recheck.since, at)) return 'end';
  return settings.enabled ? 'recheck' : 'pause';
};

/** Applies the decision to the schedule; the re-check to run now, if it is one. */
async function moveOn(
  { store, requests }: Pick<RecheckDependencies, 'store' | 'requests'>,
  recheck: ScheduledRecheck,
  at: string,
  settings: RecheckSettings,
): Promise<DueRecheck | undefined> {
  const request = await requests.get(recheck.clientId, recheck.externalId);
  const decision = decide(request, recheck, at, settings);
  if (decision === 'end') {
    await store.end(recheck);
    return undefined;
  }
  const checksDone = decision === 'recheck' ? recheck.checksDone + 1 : recheck.checksDone;
  const pause =
    decision === 'recheck'
      ? intervalSeconds(checksDone, firstIntervalFor(settings, recheck.channel))
      : MAX_RECHECK_INTERVAL_SECONDS;
  // False: another dispatcher or the change that decided it got there first; theirs stands.
  const moved = await store.reschedule(recheck, { checksDone, dueAt: secondsAfter(at, pause), now: at });
  if (!moved || decision !== 'recheck') return undefined;
  return { recheck, through: throughOf(recheck, request?.authorization.channel) };
}

/** The requests a refused start names, each with its reason; undefined when it refused the group as a whole. */
const refusedBy = (error: DomainError): RefusedRequest[] | undefined => {
  if (error instanceof RequestsNotAutomatable) {
    return error.refused.map(({ requestExternalId, reason }) => ({ requestExternalId, reason }));
  }
  if (error instanceof RequestsNotFound) {
    return error.requestExternalIds.map((requestExternalId) => ({ requestExternalId, reason: 'request_not_found' }));
  }
  return undefined;
};

/** Ids and the reason's code only: a request's externalId, never its content. */
const logRefused = (clientId: string, refused: readonly RefusedRequest[]) => {
  for (const { requestExternalId, reason } of refused) {
    log.warn('Re-check refused', { clientId, requestExternalId, reason });
  }
};

/**
 * Starts the group's batch. A request that cannot be started is logged with its reason and waits for its
 * next back-off step; the others start. A refusal of the whole group (the client user gone, quotas spent)
 * is logged and skipped the same way.
 */
async function startGroup(
  startBatch: RecheckDependencies['startBatch'],
  group: RecheckGroup,
): Promise<{ batchId: string | null }> {
  const { clientId } = group;
  try {
    const { batchId, refused } = await startBatch(group);
    logRefused(clientId, refused);
    log.info('Re-check batch started', {
      clientId,
      batchId,
      requests: group.requestExternalIds.length - refused.length,
    });
    return { batchId };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const refused = refusedBy(error);
    if (refused) {
      logRefused(clientId, refused);
    } else {
      const requests = group.requestExternalIds.length;
      log.warn('Re-check batch refused', { clientId, requests, errorName: error.name });
    }
    return { batchId: null };
  }
}

export const rechecksDispatcher = ({
  perShard = DEFAULT_PER_SHARD,
  now = () => new Date(),
  ...deps
}: RecheckDependencies) => ({
  /** The due re-checks, each moved on, as batches to start. */
  selectDue: async (): Promise<DueSelection> => {
    const at = now().toISOString();
    const settings = new Map<string, Promise<RecheckSettings>>();
    const settingsFor = (clientId: string) => {
      if (!settings.has(clientId)) settings.set(clientId, deps.settingsOf(clientId));
      return settings.get(clientId)!;
    };
    const overdue = deps.deadlines
      ? await fireOverdue({ store: deps.deadlines, requests: deps.requests }, at, perShard)
      : { more: false };
    const reads = await Promise.all(recheckShards.map((shard) => deps.store.due(shard, at, perShard)));
    const due = reads.flat();
    const chosen: DueRecheck[] = [];
    for (const recheck of due) {
      const run = await moveOn(deps, recheck, at, await settingsFor(recheck.clientId));
      if (run) chosen.push(run);
    }
    const groups = groupsOf(chosen);
    // Nothing due is the common tick: no line for it.
    if (due.length > 0)
      log.info('Re-checks selected', { due: due.length, rechecked: chosen.length, batches: groups.length });
    return { groups, more: overdue.more || reads.some((read) => read.length === perShard) };
  },

  startGroup: (group: RecheckGroup) => startGroup(deps.startBatch, group),
});

/** The group a StartRecheckBatch task was given, checked: ids that are strings, 1 to a batch's requests. */
export const recheckGroupOf = (input: unknown): RecheckGroup => {
  const ids = idsOf(input, ['clientId', 'organizationId', 'clientUserId']);
  const record = input as Record<string, unknown>;
  const { requestExternalIds } = record;
  if (
    !Array.isArray(requestExternalIds) ||
    requestExternalIds.length === 0 ||
    requestExternalIds.length > MAX_BATCH_ITEMS ||
    !requestExternalIds.every((id) => typeof id === 'string' && id !== '')
  ) {
    throw new InvalidTaskInput('requestExternalIds');
  }
  const through = throughInputOf(record);
  return {
    ...(ids as Pick<RecheckGroup, 'clientId' | 'organizationId' | 'clientUserId'>),
    ...(through ? { through } : {}),
    requestExternalIds,
  };
};
