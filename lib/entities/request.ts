import { attr, defineEntity } from './define-entity.ts';

/** A request's authorization statuses; a stored request's record follows (the port: lib/requests/request-store.ts). */
export const AUTHORIZATION_STATUSES = [
  'not_submitted',
  'pending',
  'approved',
  'partially_approved',
  'denied',
  'cancelled',
  /** The payer's portal has never seen the request (written by the automation's status check). */
  'not_found',
] as const;

export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number];

export interface Authorization {
  status: AuthorizationStatus;
  number: string | null;
  decisionDate: string | null;
  lastCheckedAt: string | null;
}

/** `document` is the request exactly as the client sent it (minus externalId). */
export interface StoredRequest {
  clientId: string;
  externalId: string;
  document: Record<string, unknown>;
  authorization: Authorization;
  version: number;
  createdAt: string;
  updatedAt: string;
}

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
