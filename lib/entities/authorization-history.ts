import { attr, defineEntity } from './define-entity.ts';
import { requestEntity } from './request.ts';
import type { AuthorizationState } from './service-event.ts';

/** What changed it: an automation run, or an API call (its request id, as the audit trail names it). */
export type ChangedBy = { kind: 'run'; runId: string } | { kind: 'api'; requestId: string };

export interface AuthorizationChange {
  clientId: string;
  externalId: string;
  /** A UUIDv7: with changedAt, the entry's place in the history. */
  changeId: string;
  changedAt: string;
  previous: AuthorizationState;
  current: AuthorizationState;
  changedBy: ChangedBy;
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
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
