import type { ClaimResponseItemAdjudication, Coding, Extension } from '@medplum/fhirtypes';
import type { AuthorizationReason, AuthorizationStatus } from '#lib/entities/request';
import { codingsOf, extensionsOf, MAX_LIST_READ, recordsOf, UnreadableAnswer } from './answer-json.ts';
import type { ItemStatus } from './answer-model.ts';
import { authorizationNumberOf, codeOf, reasonOf } from './answer-values.ts';

/*
 * The PAS reviewAction extension (ClaimResponse.fsh) and what its X12 306 codes mean to us
 * (docs/payer-api.md, "From reviewAction to our status"). PAS puts it on ClaimResponse.item.adjudication (and
 * on the header's and addItem's adjudication); PAS 1.x put it on the item itself, and the inquiry
 * Claim carries a bare reviewActionCode there: all three are read.
 */

const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';
const REVIEW_ACTION = [`${PAS}extension-reviewAction`];
/** The code sub-extension is the ReviewActionCode extension (its canonical URL); some payers name it by its slice. */
const REVIEW_ACTION_CODE = [`${PAS}extension-reviewActionCode`, 'code', 'reviewActionCode'];
/** X12 306 as PAS 2 spells it, and as PAS 1.0's examples did. */
const X12_306 = 'https://codesystem.x12.org/005010/306';
const X12_306_SYSTEMS: ReadonlySet<string> = new Set([X12_306, 'http://codesystem.x12.org/005010/306']);
/** The reasons read from one review action (X12 HCR03 repeats in PAS, once in X12). */
export const MAX_REASONS = 20;

/**
 * X12 306 (HCR01, "Action Code") onto our item statuses: the one table of it. `why` is the reason
 * for each line that is not a plain reading of the code.
 */
const REVIEW_ACTIONS: ReadonlyMap<string, { status: ItemStatus; meaning: string; why?: string }> = new Map([
  ['A1', { status: 'approved', meaning: 'Certified in total' }],
  ['A2', { status: 'partially_approved', meaning: 'Certified, partial' }],
  ['A3', { status: 'denied', meaning: 'Not certified' }],
  ['A4', { status: 'pending', meaning: 'Pended' }],
  [
    'A6',
    {
      status: 'partially_approved',
      meaning: 'Modified',
      why: 'what was authorized differs from what was asked (quantity, dates, provider; PAS returns it in addItem): the request was not granted as sent',
    },
  ],
  ['C', { status: 'cancelled', meaning: 'Cancelled' }],
  [
    'CT',
    {
      status: 'pending',
      meaning: 'Contact payer',
      why: 'the payer wants to be contacted before it decides: nothing is decided yet',
    },
  ],
  [
    'NA',
    {
      status: 'approved',
      meaning: 'No action required',
      why: 'the service needs no authorization, so it may be performed: for the provider that is an approval, and the item says why in a reason',
    },
  ],
]);

/** The reason an NA item carries: our words, under the X12 306 code itself. */
const NO_AUTHORIZATION_REQUIRED: AuthorizationReason = {
  system: X12_306,
  code: 'NA',
  text: 'No action required: the payer needs no authorization for this service.',
};

/** The item status of an X12 306 code; undefined for a code that is not one of the table's. */
export const statusOfReviewAction = (code: string): ItemStatus | undefined => REVIEW_ACTIONS.get(code)?.status;

/** What one element's review actions say, merged: the code, the item-level number, the reasons. */
export interface ReviewAction {
  code: string | null;
  number: string | null;
  reasons: AuthorizationReason[];
}

/** The X12 306 code of a reviewActionCode value: a coding of X12 306 (or without a system) whose code is in the table. */
const reviewActionCodeOf = (extension: Extension): string => {
  const codings = [...codingsOf(extension.valueCodeableConcept), ...recordsOf<Coding>([extension.valueCoding], 1)];
  const coding = codings.find(({ system }) =>
    typeof system === 'string' ? X12_306_SYSTEMS.has(system) : system === undefined || system === null,
  );
  const code = codeOf(coding?.code);
  if (code === null || !REVIEW_ACTIONS.has(code)) {
    throw new UnreadableAnswer('a review action code is not one of X12 306 (A1, A2, A3, A4, A6, C, CT, NA)');
  }
  return code;
};

/** The sub-extensions of one reviewAction extension. */
const reviewActionOfExtension = (extension: Extension): ReviewAction => {
  const codeExtension = extensionsOf(extension, REVIEW_ACTION_CODE)[0];
  const numberExtension = extensionsOf(extension, ['number'])[0];
  const reasons = extensionsOf(extension, ['reasonCode'])
    .map((reason) => reasonOf(reason.valueCodeableConcept))
    .filter((reason) => reason !== null);
  return {
    code: codeExtension ? reviewActionCodeOf(codeExtension) : null,
    number: authorizationNumberOf(numberExtension?.valueString, "an item's review number"),
    reasons,
  };
};

/**
 * The review action of an item (or of the ClaimResponse's header): the reviewAction extensions of
 * its adjudications, then those on the element itself, then a bare reviewActionCode on it. Their
 * codes must agree (two adjudications of one item that decide differently make the answer
 * unreadable); the number is the first given, the reasons are all of them up to MAX_REASONS.
 * Null when the element carries none.
 */
export const reviewActionOf = (element: {
  adjudication?: ClaimResponseItemAdjudication[];
  extension?: Extension[];
}): ReviewAction | null => {
  const actions = [
    ...recordsOf<ClaimResponseItemAdjudication>(element.adjudication, MAX_LIST_READ).flatMap((adjudication) =>
      extensionsOf(adjudication, REVIEW_ACTION),
    ),
    ...extensionsOf(element, REVIEW_ACTION),
  ].map(reviewActionOfExtension);
  const bare = extensionsOf(element, [`${PAS}extension-reviewActionCode`]).map(
    (extension): ReviewAction => ({ code: reviewActionCodeOf(extension), number: null, reasons: [] }),
  );
  const all = [...actions, ...bare];
  if (all.length === 0) return null;
  const codes = new Set(all.map((action) => action.code).filter((code) => code !== null));
  if (codes.size > 1) throw new UnreadableAnswer('one item carries review actions that disagree');
  return {
    code: [...codes][0] ?? null,
    number: all.find((action) => action.number !== null)?.number ?? null,
    reasons: all.flatMap((action) => action.reasons).slice(0, MAX_REASONS),
  };
};

/** Reasons an item has because of its code alone (NA: no authorization needed). */
export const reasonsOfCode = (code: string | null): AuthorizationReason[] =>
  code === 'NA' ? [NO_AUTHORIZATION_REQUIRED] : [];

/**
 * The authorization's status from its items' (docs/payer-api.md, "Aggregate"):
 * - any item pending → pending: the payer has not decided everything, the rest follows later;
 * - cancelled items do not count beside others (they were withdrawn); all cancelled → cancelled;
 * - all approved → approved, all denied → denied;
 * - anything else (approved beside denied, any partial) → partially_approved.
 * Undefined for no items: the ClaimResponse's header decides then.
 */
export const aggregateStatus = (statuses: readonly ItemStatus[]): AuthorizationStatus | undefined => {
  if (statuses.length === 0) return undefined;
  if (statuses.includes('pending')) return 'pending';
  const counted = statuses.filter((status) => status !== 'cancelled');
  if (counted.length === 0) return 'cancelled';
  if (counted.every((status) => status === 'approved')) return 'approved';
  if (counted.every((status) => status === 'denied')) return 'denied';
  return 'partially_approved';
};
