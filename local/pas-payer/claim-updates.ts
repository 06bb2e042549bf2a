import { randomUUID } from 'node:crypto';
import type { Bundle, Claim } from '@medplum/fhirtypes';
import { identifierKey, relatedClaimIdentifiersOf } from './bundle-reading.ts';
import { errorResponseOf, responseBundleOf } from './claim-response.ts';
import type { ClaimStore, StoredClaim } from './claims.ts';
import type { ClaimVerdict } from './decisions.ts';

/*
 * PAS Claim updates and cancels (PAS "Updating Authorization Requests"): a $submit whose Claim names the
 * claim it replaces in Claim.related. The payer keeps one claim: the update's Claim replaces the stored
 * one, which is decided again by the member's rule (or cancelled: certification type 3 on the Claim),
 * and answers as the claim stands. An update of a claim that is denied or cancelled, or that the client
 * never submitted, is rejected with an error outcome (X12 AAA 33, Input Errors) naming Claim.related:
 * PAS lets a payer require a new request, and a denied one always needs one (its note 2).
 */

const CERTIFICATION_TYPE = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-certificationType';
const RELATED = 'Bundle.entry[0].resource.related[0].claim';

/** Whether the Claim updates (or cancels) a claim submitted before. */
export const isClaimUpdate = (claim: Claim) => (claim.related ?? []).some((related) => related?.claim);

/** A cancel: certification type 3 on the Claim itself (an item's 3 cancels that item only). */
export const isCancel = (claim: Claim) =>
  (claim.extension ?? []).some(
    (extension) =>
      extension?.url === CERTIFICATION_TYPE &&
      extension.valueCodeableConcept?.coding?.some((coding) => coding?.code === '3'),
  );

export interface UpdateInput {
  clientId: string;
  request: Bundle;
  claim: Claim;
  /** What the member's rule decides of an update that is not a cancel. */
  verdict: ClaimVerdict;
  now: Date;
}

const rejected = (input: UpdateInput): { rejected: Bundle } => {
  const at = input.now.toISOString();
  const reject = { code: '33', display: 'Input Errors', path: RELATED };
  const response = errorResponseOf(input.request, input.claim, reject, randomUUID(), at);
  return { rejected: responseBundleOf(response, input.request, input.request.identifier, at) };
};

/** The update applied to the client's claim it names; or the rejection, nothing changed. */
export function applyUpdate(claims: ClaimStore, input: UpdateInput): { stored: StoredClaim } | { rejected: Bundle } {
  const keys = relatedClaimIdentifiersOf(input.request, input.claim).flatMap((identifier) => {
    const key = identifierKey(identifier);
    return key ? [key] : [];
  });
  const stored = keys.map((key) => claims.byClaimIdentifier(input.clientId, key)).find((found) => found);
  if (!stored || stored.verdict === 'denied' || stored.verdict === 'cancelled') return rejected(input);
  const verdict = isCancel(input.claim) ? 'cancelled' : input.verdict;
  claims.update(stored, { clientId: input.clientId, request: input.request, claim: input.claim, verdict });
  return { stored };
}
