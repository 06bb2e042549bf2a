import type { Authorization, StoredRequest } from '#lib/requests/request-store';
import { attr, defineEntity } from './define-entity.ts';

/** A request, keyed by the client's id for it; its attachments share its partition (one item collection). */
export const requestEntity = defineEntity<StoredRequest>()({
  name: 'Request',
  keys: { pk: 'CLIENT#<clientId>#REQ#<externalId>', sk: 'REQUEST' },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    // A JSON string, not a map: it round-trips exactly what the client sent (key order, number
    // precision beyond DynamoDB's 38 digits, empty objects) without DynamoDB's type mapping.
    document: attr.json<Record<string, unknown>>(),
    authorization: attr.map<Authorization>(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
