import type {
  AuthorizationItem,
  AuthorizationReason,
  AuthorizationStatus,
  InformationRequested,
} from '#lib/entities/request';

/*
 * What a payer's PAS answer ($submit or $inquire) means to us (docs/payer-api.md, "Reading a PAS answer"): every value
 * in it was checked against a pattern and a length before it got here (answer-values.ts).
 */

/** One item's result: the X12 306 review action read onto our statuses (review-actions.ts). */
export type ItemStatus = AuthorizationItem['status'];

export interface PayerDecision {
  /** The aggregate of the items' statuses (review-actions.ts). */
  status: AuthorizationStatus;
  /** The payer's authorization number: ClaimResponse.preAuthRef, or else the first item's. */
  number: string | null;
  /** YYYY-MM-DD, the day of ClaimResponse.created; null while the decision is pending. */
  decisionDate: string | null;
  claimResponseId: string | null;
  claimIdentifier: string | null;
  items: AuthorizationItem[];
  reasons: AuthorizationReason[];
  /** A pended answer's request for more information (its CommunicationRequests); null: nothing asked. */
  informationRequested: Omit<InformationRequested, 'requestedAt'> | null;
}

/** One issue the payer raised: an OperationOutcome's issue, or an error of a ClaimResponse with outcome `error`. */
export interface PayerIssue {
  severity: string;
  code: string;
  details: string | null;
  /** FHIRPath expressions (or locations) into the Bundle we sent. */
  expression: string[];
}

export type PasAnswer =
  | { kind: 'decision'; decision: PayerDecision }
  | { kind: 'refused'; issues: PayerIssue[] }
  | { kind: 'not_found' }
  /** Not a PAS answer we can read; the reason is ours, fixed text without anything of the payer's. */
  | { kind: 'invalid'; reason: string };
