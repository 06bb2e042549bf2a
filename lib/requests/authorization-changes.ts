import { retryOnConflict } from '#lib/concurrency';
import type { AuthorizationChange, ChangedBy } from '#lib/entities/authorization-history';
import type { DecisionDeadline } from '#lib/entities/decision-deadline';
import type { RecheckThrough, ScheduledRecheck } from '#lib/entities/recheck';
import type { Authorization, AuthorizationStatus, StoredRequest } from '#lib/entities/request';
import type { AuthorizationState, ServiceEvent } from '#lib/entities/service-event';
import { newEvent } from '#lib/events/events';
import { uuidv7 } from '#lib/ids';
import { firstIntervalFor, intervalSeconds, scheduleChange, secondsAfter } from '#lib/rechecks/recheck-policy';
import type { RecheckSettingsOf } from '#lib/rechecks/recheck-settings';
import { recheckShardOf } from '#lib/rechecks/recheck-shards';
import { shardOf } from '#lib/table-shards';
import { warnIfUnlisted } from './authorization-lifecycle.ts';
import { decisionReasonsOf, reasonCodesOf } from './decision-reasons.ts';
import { informationEventDataOf, keepingRequestedAt, newInformationRequest } from './information-requests.ts';
import type { RequestStore } from './request-store.ts';

/*
 * How a request's authorization changes (docs/events.md): every write of one that differs in status,
 * number or decision date, or brings a new request for more information, keeps a history entry and
 * tells the client (`authorization.status_changed`, `authorization.information_requested`), all in the
 * write's own transaction; a write that changes nothing else (a status check that reads
 * the same answer) only moves lastCheckedAt, with neither. A change that makes it undecided starts
 * its scheduled re-checks, one that decides it ends them (docs/rechecks.md), in that same transaction.
 * A change the lifecycle's table does not list is written and logged (authorization-lifecycle.ts).
 */

/** What a client is told of: the decision, not when it was last read. */
const stateOf = ({ status, number, decisionDate }: Authorization): AuthorizationState => ({
  status,
  number,
  decisionDate,
});

const sameDecision = (a: Authorization, b: Authorization) =>
  a.status === b.status && a.number === b.number && a.decisionDate === b.decisionDate;

/**
 * The history entry and the events of a change from `request`'s authorization to `next`: a new decision
 * sends `authorization.status_changed`, a new request for more information (the status may stay
 * pending) `authorization.information_requested`; one entry keeps both.
 */
const changeOf = (request: StoredRequest, next: Authorization, changedBy: ChangedBy, at: string) => {
  const { clientId, externalId } = request;
  const previous = stateOf(request.authorization);
  const current = stateOf(next);
  const decision = decisionReasonsOf(next);
  const information = newInformationRequest(request, next);
  const entry: AuthorizationChange = {
    clientId,
    externalId,
    changeId: uuidv7(Date.parse(at)),
    changedAt: at,
    previous,
    current,
    changedBy,
    ...(decision.items.length > 0 || decision.reasons.length > 0 ? { decision } : {}),
    ...(information ? { informationRequested: information } : {}),
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  const event = newEvent('authorization.status_changed', clientId, at, {
    requestExternalId: externalId,
    previous,
    current,
    runId: changedBy.kind === 'run' ? changedBy.runId : null,
    ...reasonCodesOf(decision),
  });
  // Which subscriptions may see the run's id (webhookPayloadOf); the event still reaches them all.
  if (changedBy.kind === 'run' && changedBy.organizationId) event.runOrganizationId = changedBy.organizationId;
  const events: ServiceEvent[] = [
    ...(sameDecision(request.authorization, next) ? [] : [event]),
    ...(information
      ? [newEvent('authorization.information_requested', clientId, at, informationEventDataOf(externalId, information))]
      : []),
  ];
  return { entry, events };
};

/**
 * How the automation that read an authorization schedules its re-checks: the client's settings, and
 * on whose behalf a re-check runs (the client user and organization of the reading run) through what
 * (its portal account, or its payer connection).
 */
export interface RecheckContext {
  settingsOf: RecheckSettingsOf;
  onBehalfOf: Pick<ScheduledRecheck, 'clientUserId' | 'organizationId'> & RecheckThrough;
}

/** What a change does to the re-check schedule (docs/rechecks.md); nothing without a context (an API call). */
const recheckOf = async (
  request: StoredRequest,
  next: Authorization,
  at: string,
  context: RecheckContext | undefined,
): Promise<{ start: ScheduledRecheck } | { end: true } | undefined> => {
  const what = scheduleChange(request.authorization.status, next.status);
  if (what === 'end') return { end: true };
  if (what === 'keep' || !context) return undefined;
  const { clientId, externalId } = request;
  const firstIntervalSeconds = firstIntervalFor(await context.settingsOf(clientId), next.channel);
  const start: ScheduledRecheck = {
    clientId,
    externalId,
    shard: recheckShardOf(clientId, externalId),
    since: at,
    checksDone: 0,
    dueAt: secondsAfter(at, intervalSeconds(0, firstIntervalSeconds)),
    ...context.onBehalfOf,
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
  return { start };
};

/** `next` as written: one that sets no decision deadline keeps the request's (a status read never resets it). */
const keepingDeadline = (request: StoredRequest, next: Authorization): Authorization =>
  next.decisionDueAt !== undefined || request.authorization.decisionDueAt === undefined
    ? next
    : { ...next, decisionDueAt: request.authorization.decisionDueAt };

/** Decided: the payer's deadline no longer runs (the deadline stays on the record). */
const DECIDED: readonly AuthorizationStatus[] = ['approved', 'denied', 'partially_approved', 'cancelled'];

/** Whether the request's decision deadline is under watch: it has one and nobody decided it. */
export const isWatched = (authorization: Authorization) =>
  typeof authorization.decisionDueAt === 'string' && !DECIDED.includes(authorization.status);

/**
 * What a write does to the watch of the request's decision deadline (docs/payer-api.md, "Decision
 * deadlines"): one starts when a deadline is recorded on an undecided request (or moved: a new
 * submission), ends when the request is decided or loses its deadline; nothing else touches it, so a
 * deadline that has passed and fired is not watched again.
 */
export const deadlineWatchOf = (
  request: StoredRequest,
  written: Authorization,
  at: string,
): { start: DecisionDeadline } | { end: true } | undefined => {
  const before = request.authorization;
  if (isWatched(written) && (!isWatched(before) || before.decisionDueAt !== written.decisionDueAt)) {
    const { clientId, externalId } = request;
    const start: DecisionDeadline = {
      clientId,
      externalId,
      shard: shardOf(clientId, externalId),
      decisionDueAt: written.decisionDueAt!,
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    return { start };
  }
  return isWatched(before) && !isWatched(written) ? { end: true } : undefined;
};

/**
 * Sets a request's authorization to `next` at `at`, on whatever version is current (read again when
 * another write gets in between); false when there is no such request.
 */
export const setAuthorization = (
  requests: Pick<RequestStore, 'get' | 'setAuthorization'>,
  ref: { clientId: string; externalId: string },
  next: Authorization,
  changedBy: ChangedBy,
  at: string,
  rechecks?: RecheckContext,
): Promise<boolean> =>
  retryOnConflict(
    async () => {
      const request = await requests.get(ref.clientId, ref.externalId);
      if (!request) return false;
      const written = keepingRequestedAt(request, keepingDeadline(request, next));
      const changed = !sameDecision(request.authorization, written) || newInformationRequest(request, written);
      const change = changed ? changeOf(request, written, changedBy, at) : undefined;
      const recheck = change && (await recheckOf(request, next, at, rechecks));
      const deadline = deadlineWatchOf(request, written, at);
      await requests.setAuthorization({
        ...ref,
        authorization: written,
        version: request.version,
        now: at,
        ...(deadline ? { deadline } : {}),
        ...(change ? { change: { ...change, ...(recheck ? { recheck } : {}) } } : {}),
      });
      // Once written (a retried write warns once): the payer's word stands, the table's gap is logged.
      if (change) {
        const transition = { ...ref, from: request.authorization.status, to: written.status };
        warnIfUnlisted(transition, written.channel, changedBy.kind === 'run' ? changedBy.runId : undefined);
      }
      return true;
    },
    { attempts: 8 },
  );
