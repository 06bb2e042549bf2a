import type { AuthorizationStatus } from '#lib/entities/request';
import type { EventType } from '#lib/entities/service-event';
import { log } from '#lib/observability/logger';

/*
 * The authorization's lifecycle: ONE table of its states and transitions, which channel can make each, by
 * what, and which event each sends. docs/authorization-lifecycle.md is generated from it (`npm run -s
 * lifecycle`; a unit test fails when the document is stale), the tests hold it to the statuses and the event
 * types, authorization-changes.ts warns of a change it does not list, and the scraper session page shows the
 * states a request can move to. A payer's word stands: a change the table does not list is written all the
 * same (the payer, not this table, decides), and logged so that a gap in the table or a payer's odd turn is seen.
 */

type Channel = 'portal' | 'pas';

/** What makes a transition: the answer or the event that brings it. */
export const LIFECYCLE_TRIGGERS = {
  submission:
    'the answer to a PAS Claim/$submit (POST …/Requests/{externalId}/submit; the portal channel never submits)',
  'status-read':
    "a check-auth-status run: the portal's status page or PAS Claim/$inquire (a client's batch or a scheduled re-check)",
  notification:
    "a payer's subscription notification: it never writes a status itself, it starts the $inquire that does",
  'claim-update':
    'the answer to a PAS claim update (a submit of a request already sent: changes, or attachments asked for)',
  cancel: 'the answer to a PAS cancel (POST …/Requests/{externalId}/cancel: certification type 3)',
  deadline: 'the re-check dispatcher found the decision deadline (authorization.decisionDueAt) passed undecided',
} as const;
type Trigger = keyof typeof LIFECYCLE_TRIGGERS;

export interface LifecycleTransition {
  from: readonly AuthorizationStatus[];
  /** `same`: the status stays (a turn within it: a request for information, a deadline). */
  to: readonly AuthorizationStatus[] | 'same';
  channels: readonly Channel[];
  by: readonly Trigger[];
  emits: EventType;
  /** When, in a few words (the document's table). */
  when: string;
}

/** What a status means; the order is the document's. */
export const LIFECYCLE_STATES: Record<AuthorizationStatus, string> = {
  not_submitted: 'nothing read yet: the request as the client stored it',
  pending: 'the payer has it and has not decided (PAS A4 or CT, the portal\'s "pended")',
  not_found: 'the payer does not know it (the portal shows nothing, $inquire finds no claim)',
  approved: 'every service granted (PAS A1, NA)',
  partially_approved: 'some granted, some not, or granted otherwise than asked (PAS A2, A6)',
  denied: 'nothing granted (PAS A3): a new request is needed, an update is refused',
  cancelled: 'withdrawn (PAS C on every item): the provider cancelled it, or the payer did',
};

const DECISIONS = ['approved', 'partially_approved', 'denied'] as const;
const STATUS_CHANGED = 'authorization.status_changed';
const INFORMATION_REQUESTED = 'authorization.information_requested';

export const LIFECYCLE: readonly LifecycleTransition[] = [
  {
    from: ['not_submitted', 'not_found'],
    to: ['pending', ...DECISIONS],
    channels: ['pas'],
    by: ['submission'],
    emits: STATUS_CHANGED,
    when: 'the payer pends or decides the claim it was sent',
  },
  {
    from: ['not_submitted'],
    to: ['pending', ...DECISIONS, 'not_found'],
    channels: ['portal', 'pas'],
    by: ['status-read'],
    emits: STATUS_CHANGED,
    when: 'the first read of a request submitted some other way (or not at all)',
  },
  {
    from: ['not_found'],
    to: ['pending', ...DECISIONS],
    channels: ['portal', 'pas'],
    by: ['status-read'],
    emits: STATUS_CHANGED,
    when: 'the payer shows it at last',
  },
  {
    from: ['pending'],
    to: [...DECISIONS, 'not_found'],
    channels: ['portal', 'pas'],
    by: ['status-read'],
    emits: STATUS_CHANGED,
    when: 'the payer decided (or no longer shows it: it stays under re-check)',
  },
  {
    from: ['pending'],
    to: [...DECISIONS, 'cancelled'],
    channels: ['pas'],
    by: ['notification'],
    emits: STATUS_CHANGED,
    when: 'the payer tells of a change and the $inquire it starts reads the decision',
  },
  {
    from: ['pending', 'approved', 'partially_approved'],
    to: ['cancelled'],
    channels: ['pas'],
    by: ['cancel', 'status-read', 'notification'],
    emits: STATUS_CHANGED,
    when: 'the payer confirms a cancel (at once, or on a later read), or withdrew it itself',
  },
  {
    from: ['pending', 'approved', 'partially_approved'],
    to: ['pending', ...DECISIONS],
    channels: ['pas'],
    by: ['claim-update'],
    emits: STATUS_CHANGED,
    when: 'the payer answers an update: reviews it again (pending) or decides it; from pending to pending only a new number sends the event',
  },
  {
    from: ['pending', ...DECISIONS],
    to: 'same',
    channels: ['portal', 'pas'],
    by: ['status-read'],
    emits: STATUS_CHANGED,
    when: 'a read of the same status with another number or decision date',
  },
  {
    from: ['not_submitted', 'not_found'],
    to: ['pending'],
    channels: ['pas'],
    by: ['submission', 'status-read'],
    emits: INFORMATION_REQUESTED,
    when: 'the first pended answer already asks for more (authorization.informationRequested), beside authorization.status_changed',
  },
  {
    from: ['pending'],
    to: 'same',
    channels: ['pas'],
    by: ['status-read', 'notification', 'claim-update'],
    emits: INFORMATION_REQUESTED,
    when: 'a pended answer asks for more, or for something else: once per new request for information',
  },
  {
    from: ['approved', 'partially_approved'],
    to: ['pending'],
    channels: ['pas'],
    by: ['claim-update'],
    emits: INFORMATION_REQUESTED,
    when: 'the payer pends an update and asks for more, beside authorization.status_changed',
  },
  {
    from: ['pending', 'not_found'],
    to: 'same',
    channels: ['pas'],
    by: ['deadline'],
    emits: 'authorization.decision_overdue',
    when: 'the decision deadline passed undecided: once per deadline, a history entry whose state stays the same',
  },
];

/** Every (from, to) pair a row makes. */
export const pairsOf = (transition: LifecycleTransition): Array<[AuthorizationStatus, AuthorizationStatus]> =>
  transition.from.flatMap((from) =>
    transition.to === 'same'
      ? [[from, from] as [AuthorizationStatus, AuthorizationStatus]]
      : transition.to.map((to) => [from, to] as [AuthorizationStatus, AuthorizationStatus]),
  );

/**
 * Whether the table lists a change from `from` to `to` through `channel` (undefined: any channel), made by
 * `by` (undefined: anything).
 */
export const isListedTransition = (
  from: AuthorizationStatus,
  to: AuthorizationStatus,
  channel?: Channel,
  by?: Trigger,
) =>
  LIFECYCLE.some(
    (transition) =>
      (channel === undefined || transition.channels.includes(channel)) &&
      (by === undefined || transition.by.includes(by)) &&
      pairsOf(transition).some(([f, t]) => f === from && t === to),
  );

/** The statuses a request in `status` can move to (itself when a turn keeps it there), in the table's state order. */
export const nextStatesOf = (status: AuthorizationStatus): AuthorizationStatus[] => {
  const reachable = new Set(
    LIFECYCLE.flatMap((transition) =>
      pairsOf(transition)
        .filter(([from]) => from === status)
        .map(([, to]) => to),
    ),
  );
  return (Object.keys(LIFECYCLE_STATES) as AuthorizationStatus[]).filter((state) => reachable.has(state));
};

/**
 * The runtime check: a change the table does not list is logged (ids and both statuses), never refused. A
 * same-status write that changes something else (a number, a request for information) is checked too.
 */
export const warnIfUnlisted = (
  change: { clientId: string; externalId: string; from: AuthorizationStatus; to: AuthorizationStatus },
  channel: Channel | undefined,
  runId: string | undefined,
) => {
  if (isListedTransition(change.from, change.to, channel)) return false;
  log.warn('Authorization change not in the lifecycle', {
    clientId: change.clientId,
    requestExternalId: change.externalId,
    previousStatus: change.from,
    status: change.to,
    channel,
    runId,
  });
  return true;
};
