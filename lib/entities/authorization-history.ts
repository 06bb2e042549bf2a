import { attr, defineEntity } from './define-entity.ts';
import {
  type AuthorizationItem,
  type AuthorizationReason,
  type InformationRequested,
  requestEntity,
} from './request.ts';
import type { AuthorizationState } from './service-event.ts';

/**
 * What changed it: an automation run (and the organization it ran for: a request is its client's, a run
 * its organization's, so a key restricted to another organization is not shown the run's id), or an API
 * call (its request id, as the audit trail names it). Entries written before runs carried their
 * organization have none. A `deadline` entry changes nothing: the payer's decision deadline passed with
 * the request undecided (previous and current are the same state; docs/payer-api.md, "Decision deadlines").
 */
export type ChangedBy =
  | { kind: 'run'; runId: string; organizationId?: string }
  | { kind: 'api'; requestId: string }
  | { kind: 'deadline'; decisionDueAt: string };

/** A change read by `run`. */
export const changedByRun = (run: { runId: string; organizationId: string }): ChangedBy => ({
  kind: 'run',
  runId: run.runId,
  organizationId: run.organizationId,
});

/** An item of a denial or partial approval as the history keeps it: how it was decided, and the payer's reasons. */
interface DecisionItem {
  sequence: number;
  status: AuthorizationItem['status'];
  reasons: AuthorizationReason[];
}

/** Why a change into denied or partially_approved was made: per item, and for the whole. */
export interface DecisionReasons {
  items: DecisionItem[];
  reasons: AuthorizationReason[];
}

export interface AuthorizationChange {
  clientId: string;
  externalId: string;
  /** A UUIDv7: with changedAt, the entry's place in the history. */
  changeId: string;
  changedAt: string;
  previous: AuthorizationState;
  current: AuthorizationState;
  changedBy: ChangedBy;
  /**
   * A change into denied or partially_approved: why (lib/requests/decision-reasons.ts). Absent on other
   * changes and on entries written before the history kept it; read as empty lists.
   */
  decision?: DecisionReasons;
  /** A change that brought a new request for more information (the status may stay pending): what it asks. */
  informationRequested?: InformationRequested;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * One change of a request's authorization, in the request's item collection: ISO timestamps sort as
 * text, so the history newest first is one Query in reverse key order (`begins_with AUTHZ#`).
 */
export const authorizationChangeEntity = defineEntity<AuthorizationChange>()({
  name: 'AuthorizationChange',
  keys: { pk: requestEntity.keys.pk.template, sk: 'AUTHZ#<changedAt>#<changeId>' },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    changeId: attr.string(),
    changedAt: attr.string(),
    previous: attr.map<AuthorizationState>(),
    current: attr.map<AuthorizationState>(),
    changedBy: attr.map<ChangedBy>(),
    decision: attr.optional(attr.map<DecisionReasons>()),
    informationRequested: attr.optional(attr.map<InformationRequested>()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
