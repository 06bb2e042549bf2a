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

/** A payer's reason for a decision: a code of its code system (X12 HCR on PAS), and its text. */
export interface AuthorizationReason {
  system: string | null;
  code: string;
  text: string | null;
}

/** One requested service as the payer decided it (the payer-API channel reads these per item). */
export interface AuthorizationItem {
  /** The Claim item's sequence: the request's procedure at position sequence − 1. */
  sequence: number;
  serviceCode: { system: string | null; code: string } | null;
  status: Exclude<AuthorizationStatus, 'not_submitted' | 'not_found'>;
  /** The X12 306 review action code the status was read from (A1, A2, A3, A4, A6, C, CT, NA). */
  reviewActionCode: string | null;
  number: string | null;
  authorizedPeriod: { start: string | null; end: string | null } | null;
  authorizedQuantity: { value: number; unit: string | null } | null;
  reasons: AuthorizationReason[];
}

/** A FHIR date or dateTime with its zone, as a payer writes a due date (answer-values.ts checks it as a day). */
export const DUE_BY_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T[0-9:.]+(Z|[+-]\\d{2}:\\d{2}))?$';

/**
 * Bounds of what a payer's decision may store: more is cut off when the answer is read (lib/payer-api/pas/).
 * An `authorization.status_changed` event names at most `eventItemReasonCodes` codes per item (X12 HCR has one,
 * PAS lets it repeat), so that its worst case stays under EventBridge's 256 KB per event (docs/events.md).
 */
export const DECISION_LIMITS = {
  items: 100,
  reasons: 20,
  itemReasons: 20,
  reasonText: 500,
  eventItemReasonCodes: 5,
  /** What one request for more information may ask (its CommunicationRequests, one item each). */
  requestedInformation: 20,
} as const;

/** One thing the payer asks for: an attachment code (LOINC on PAS), its words, and the item it is about. */
export interface RequestedInformation {
  code: { system: string | null; code: string };
  text: string | null;
  /** The Claim item's sequence it is about; null: the whole request. */
  sequence: number | null;
}

/**
 * The payer's request for more information on a pended authorization (docs/payer-api.md, "More
 * information requested"): since when (first read), by when (the payer's date or date-time, null: not
 * said), and what.
 */
export interface InformationRequested {
  requestedAt: string;
  dueBy: string | null;
  items: RequestedInformation[];
}

/** Which channel last read the authorization (docs/payer-api.md). */
type AuthorizationChannel = 'pas' | 'portal';

export interface Authorization {
  status: AuthorizationStatus;
  number: string | null;
  decisionDate: string | null;
  lastCheckedAt: string | null;
  /** Absent until a channel read it. */
  channel?: AuthorizationChannel;
  /** Per requested service: only the payer-API channel reads them; absent otherwise. */
  items?: AuthorizationItem[];
  /** The payer's denial reasons and notes (the payer-API channel); absent otherwise. */
  reasons?: AuthorizationReason[];
  /**
   * When the payer owes its decision (a PAS submission: docs/payer-api.md, "Decision deadlines"); null
   * when the payer is not held to the timeframes, absent when no PAS submission set one. A write that
   * gives none keeps the request's (lib/requests/authorization-changes.ts).
   */
  decisionDueAt?: string | null;
  /** What the payer asks for before it decides (the payer-API channel); null or absent: nothing. */
  informationRequested?: InformationRequested | null;
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
