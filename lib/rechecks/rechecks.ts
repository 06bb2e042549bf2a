import type { ScheduledRecheck } from '#lib/entities/recheck';
import { DomainError } from '#lib/errors';
import { log } from '#lib/observability/logger';
import type { RequestStore } from '#lib/requests/request-store';
import { InvalidTaskInput } from '#lib/runs/errors';
import { idsOf } from '#lib/runs/run-recorder';
import { MAX_BATCH_REQUESTS as MAX_BATCH_ITEMS } from '#lib/validation/schemas/rpa';
import {
  expired,
  intervalSeconds,
  isUndecided,
  MAX_RECHECK_INTERVAL_SECONDS,
  type RecheckSettings,
  secondsAfter,
} from './recheck-policy.ts';
import { recheckShards } from './recheck-shards.ts';
import type { RecheckStore } from './recheck-store.ts';

/*
 * The re-check dispatcher (docs/rechecks.md): the state machine's two tasks, and the local timer's.
 * selectDue reads what is due from each shard of the index, moves each re-check on to its next
 * back-off step before anything starts (a crash skips one re-check, it never repeats one), and
 * groups the requests by client user and portal account; startGroup starts one check-auth-status
 * batch per group, as that client user would. Ids only, in and out: executions carry no PHI.
 */

/** One batch to start: a client user's due requests on one portal account. */
export interface RecheckGroup {
  clientId: string;
  organizationId: string;
  clientUserId: string;
  portalAccountId: string;
  requestExternalIds: string[];
}

export interface DueSelection {
  groups: RecheckGroup[];
  /** Some shard had more due than one read takes: select again. */
  more: boolean;
}

export interface RecheckDependencies {
  store: RecheckStore;
  requests: Pick<RequestStore, 'get'>;
  settingsOf: (clientId: string) => Promise<RecheckSettings>;
  /** Starts a check-auth-status batch as the group's client user; its id. Domain errors are refusals. */
  startBatch: (group: RecheckGroup) => Promise<{ batchId: string }>;
  /** Due re-checks read per shard and selection. */
  perShard?: number;
  now?: () => Date;
}

/** What a due re-check comes to: started again, paused (re-checks off), or over. */
type Decision = 'recheck' | 'pause' | 'end';

const DEFAULT_PER_SHARD = 50;

const groupKey = (r: ScheduledRecheck) => [r.clientId, r.organizationId, r.clientUserId, r.portalAccountId].join('\n');

/** The re-checks grouped by client user and account, each group at most a batch long. */
export const groupsOf = (rechecks: readonly ScheduledRecheck[]): RecheckGroup[] => {
  const byKey = new Map<string, ScheduledRecheck[]>();
  for (const recheck of rechecks) byKey.set(groupKey(recheck), [...(byKey.get(groupKey(recheck)) ?? []), recheck]);
  return [...byKey.values()].flatMap((members) => {
    const { clientId, organizationId, clientUserId, portalAccountId } = members[0]!;
    const groups: RecheckGroup[] = [];
    for (let i = 0; i < members.length; i += MAX_BATCH_ITEMS) {
      const requestExternalIds = members.slice(i, i + MAX_BATCH_ITEMS).map((member) => member.externalId);
      groups.push({ clientId, organizationId, clientUserId, portalAccountId, requestExternalIds });
    }
    return groups;
  });
};

export const rechecksDispatcher = ({
  store,
  requests,
  settingsOf,
  startBatch,
  perShard = DEFAULT_PER_SHARD,
  now = () => new Date(),
}: RecheckDependencies) => {
  /** Whether the request still needs a re-check, and whether its client wants one now. */
  const decide = async (recheck: ScheduledRecheck, at: string, settings: RecheckSettings): Promise<Decision> => {
    const request = await requests.get(recheck.clientId, recheck.externalId);
    if (!request || !isUndecided(request.authorization.status) || expired(recheck.since, at)) return 'end';
    return settings.enabled ? 'recheck' : 'pause';
  };

  /** Applies the decision to the schedule; whether the re-check is to run now. */
  const moveOn = async (recheck: ScheduledRecheck, at: string, settings: RecheckSettings) => {
    const decision = await decide(recheck, at, settings);
    if (decision === 'end') {
      await store.end(recheck);
      return false;
    }
    const checksDone = decision === 'recheck' ? recheck.checksDone + 1 : recheck.checksDone;
    const pause =
      decision === 'recheck'
        ? intervalSeconds(checksDone, settings.firstIntervalSeconds)
        : MAX_RECHECK_INTERVAL_SECONDS;
    // False: another dispatcher or the change that decided it got there first; theirs stands.
    const moved = await store.reschedule(recheck, { checksDone, dueAt: secondsAfter(at, pause), now: at });
    return moved && decision === 'recheck';
  };

  return {
    /** The due re-checks, each moved on, as batches to start. */
    selectDue: async (): Promise<DueSelection> => {
      const at = now().toISOString();
      const settings = new Map<string, Promise<RecheckSettings>>();
      const settingsFor = (clientId: string) => {
        if (!settings.has(clientId)) settings.set(clientId, settingsOf(clientId));
        return settings.get(clientId)!;
      };
      const reads = await Promise.all(recheckShards.map((shard) => store.due(shard, at, perShard)));
      const due = reads.flat();
      const chosen: ScheduledRecheck[] = [];
      for (const recheck of due) {
        if (await moveOn(recheck, at, await settingsFor(recheck.clientId))) chosen.push(recheck);
      }
      const groups = groupsOf(chosen);
      // Nothing due is the common tick: no line for it.
      if (due.length > 0)
        log.info('Re-checks selected', { due: due.length, rechecked: chosen.length, batches: groups.length });
      return { groups, more: reads.some((read) => read.length === perShard) };
    },

    /**
     * Starts the group's batch; a refusal (the client user or every account gone, quotas spent) is
     * logged and skipped: the requests wait for their next back-off step.
     */
    startGroup: async (group: RecheckGroup): Promise<{ batchId: string | null }> => {
      try {
        const { batchId } = await startBatch(group);
        log.info('Re-check batch started', {
          clientId: group.clientId,
          batchId,
          requests: group.requestExternalIds.length,
        });
        return { batchId };
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        log.warn('Re-check batch refused', {
          clientId: group.clientId,
          requests: group.requestExternalIds.length,
          errorName: error.name,
        });
        return { batchId: null };
      }
    },
  };
};

/** The group a StartRecheckBatch task was given, checked: ids that are strings, 1 to a batch's requests. */
export const recheckGroupOf = (input: unknown): RecheckGroup => {
  const ids = idsOf(input, ['clientId', 'organizationId', 'clientUserId', 'portalAccountId']);
  const requestExternalIds = (input as { requestExternalIds?: unknown }).requestExternalIds;
  if (
    !Array.isArray(requestExternalIds) ||
    requestExternalIds.length === 0 ||
    requestExternalIds.length > MAX_BATCH_ITEMS ||
    !requestExternalIds.every((id) => typeof id === 'string' && id !== '')
  ) {
    throw new InvalidTaskInput('requestExternalIds');
  }
  return { ...(ids as Omit<RecheckGroup, 'requestExternalIds'>), requestExternalIds };
};
