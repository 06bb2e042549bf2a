import { attr, defineEntity } from './define-entity.ts';

/** The decision timeframes a payer is held to (docs/payer-connections.md). */
export const DECISION_TIMEFRAMES = ['cms-0057-f', 'none'] as const;
export type DecisionTimeframes = (typeof DECISION_TIMEFRAMES)[number];

/** How the answer to a request for more information reaches the payer (docs/payer-api.md, "CDex attachments"). */
export const ATTACHMENT_SUBMISSIONS = ['claim-update', 'cdex'] as const;
export type AttachmentSubmission = (typeof ATTACHMENT_SUBMISSIONS)[number];
/** Whether we subscribe to the payer's pended results (docs/payer-api.md, "Subscriptions"). */
export const PAYER_SUBSCRIPTION_CHANNELS = ['rest-hook', 'none'] as const;
export type PayerSubscriptionChannel = (typeof PAYER_SUBSCRIPTION_CHANNELS)[number];

/**
 * A payer's FHIR Prior Authorization API, as operators keep it (admin CLI `set-payer-endpoint`;
 * docs/payer-connections.md). Operator data, the same for every client: a request whose
 * `patient.PayerId` has an endpoint here can go through the payer's API (the port:
 * lib/payer-endpoints/payer-endpoint-store.ts).
 */
export interface StoredPayerEndpoint {
  /** As a request's `patient.PayerId` carries it (case and spaces matter). */
  payerId: string;
  /** The payer's name as operators wrote it (the PAS bundle's insurer display); null when not given. */
  name: string | null;
  /** The FHIR base URL: `$submit` is POSTed to `<fhirBaseUrl>/Claim/$submit`. */
  fhirBaseUrl: string;
  /** The payer's OAuth 2.0 token endpoint (SMART Backend Services: client_credentials, private_key_jwt). */
  tokenUrl: string;
  /** The scopes asked for at the token endpoint, space-separated. */
  scope: string;
  /**
   * Whether the payer's decisions run against CMS-0057-F's timeframes (72 h urgent, 7 days standard:
   * docs/payer-api.md, "Decision deadlines"), or not (`none`: a payer the rule does not cover, such as a
   * federal-exchange QHP). Items written before it existed have none stored: `cms-0057-f`.
   */
  decisionTimeframes: DecisionTimeframes;
  /**
   * How requested documents go to the payer: in a PAS claim update (`claim-update`), or by Da Vinci CDex
   * `$submit-attachment` (`cdex`). Items written before it existed have none stored: `claim-update`.
   */
  attachmentSubmission: AttachmentSubmission;
  /**
   * `rest-hook`: the payer takes PAS subscriptions (R4 Subscriptions Backport), one per connection, made at
   * its first pended answer; `none` (items written before it existed too): re-checks alone.
   */
  subscriptions: PayerSubscriptionChannel;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * One item per payer, outside every client's keys (like the API-key lookup: nothing of a tenant is in
 * it), keyed by the payer id; gsi1 lists them all in payer-id order from one partition (a directory of
 * a few hundred payers, written by operators: no hot partition to fear).
 */
export const payerEndpointEntity = defineEntity<StoredPayerEndpoint>()({
  name: 'PayerEndpoint',
  keys: { pk: 'PAYER#<payerId>', sk: 'ENDPOINT', gsi1pk: 'PAYERENDPOINTS', gsi1sk: '<payerId>' },
  attributes: {
    payerId: attr.string(),
    name: attr.nullAsAbsent(attr.string()),
    fhirBaseUrl: attr.string(),
    tokenUrl: attr.string(),
    scope: attr.string(),
    decisionTimeframes: attr.absentAs(attr.string<DecisionTimeframes>(), () => 'cms-0057-f' as const),
    attachmentSubmission: attr.absentAs(attr.string<AttachmentSubmission>(), () => 'claim-update' as const),
    subscriptions: attr.absentAs(attr.string<PayerSubscriptionChannel>(), () => 'none' as const),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
