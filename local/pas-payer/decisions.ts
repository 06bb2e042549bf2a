import type { ClaimItem } from '@medplum/fhirtypes';
import { DENIAL_REASONS, PEND_REASON, type ReasonCode } from './seed.ts';

/**
 * How the payer decides a claim's items, as X12 306 review actions (HCR01): A1 certified in total, A2
 * certified in part, A3 not certified, A4 pended. By the member's rule at submission (seed.ts), and by the
 * operator for a pended claim. Pure: numbers are given by the caller.
 */
export type ReviewAction = 'A1' | 'A2' | 'A3' | 'A4' | 'C';

export const REVIEW_ACTION_TEXT: Record<ReviewAction, string> = {
  A1: 'Certified in total',
  A2: 'Certified - partial',
  A3: 'Not Certified',
  A4: 'Pended',
  C: 'Cancelled',
};

export interface ItemDecision {
  sequence: number;
  action: ReviewAction;
  reason?: ReasonCode;
  /** Certified in part: the quantity certified (half the one requested, at least 1). */
  certifiedQuantity?: number;
}

/** What the operator (or the seed's rule) decides for a whole claim; `cancelled`: the client cancelled it. */
export type ClaimVerdict = 'approved' | 'partially_approved' | 'denied' | 'pended' | 'cancelled';
export const OPERATOR_VERDICTS = [
  'approved',
  'partially_approved',
  'denied',
] as const satisfies readonly ClaimVerdict[];

const [DEFAULT_DENIAL] = DENIAL_REASONS;

const INFO_CANCELLED = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/modifierextension-infoCancelled';

/** An item a Claim update cancelled (PAS spec-69): no longer asked for. */
const isCancelledItem = (item: ClaimItem) =>
  item.modifierExtension?.some((extension) => extension?.url === INFO_CANCELLED && extension.valueBoolean === true) ??
  false;

/**
 * Each item's decision: all certified, all not certified (with the reason), all pended; or partly — the
 * first item certified and the others not, or a single item certified for half its quantity (at least 1).
 * Items cancelled by an update, and every item of a cancelled claim, are C (cancelled).
 */
export function decideItems(
  items: readonly ClaimItem[],
  verdict: ClaimVerdict,
  reason: ReasonCode = DEFAULT_DENIAL,
): ItemDecision[] {
  const asked = items.filter((item) => !isCancelledItem(item));
  return items.map((item): ItemDecision => {
    const sequence = item.sequence;
    const index = asked.indexOf(item);
    if (verdict === 'cancelled' || index < 0) return { sequence, action: 'C' };
    if (verdict === 'approved') return { sequence, action: 'A1' };
    if (verdict === 'denied') return { sequence, action: 'A3', reason };
    if (verdict === 'pended') return { sequence, action: 'A4', reason: PEND_REASON };
    if (asked.length > 1) return index === 0 ? { sequence, action: 'A1' } : { sequence, action: 'A3', reason };
    const requested = item.quantity?.value ?? 1;
    return { sequence, action: 'A2', reason, certifiedQuantity: Math.max(1, Math.floor(requested / 2)) };
  });
}

/** Whether any item was certified (in total or in part): the claim then has an authorization number. */
export const anyCertified = (decisions: readonly ItemDecision[]) =>
  decisions.some((decision) => decision.action === 'A1' || decision.action === 'A2');
