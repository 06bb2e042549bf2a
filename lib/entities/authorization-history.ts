import type { AuthorizationState } from '#lib/events/service-event';
import type { AuthorizationChange, ChangedBy } from '#lib/requests/authorization-history-store';
import { attr, defineEntity } from './define-entity.ts';
import { requestEntity } from './request.ts';

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
