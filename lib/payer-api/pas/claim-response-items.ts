import type {
  Claim,
  ClaimItem,
  ClaimResponse,
  ClaimResponseAddItem,
  ClaimResponseItem,
  ClaimResponseItemAdjudication,
  Extension,
  Period,
} from '@medplum/fhirtypes';
import type { AuthorizationItem, AuthorizationReason } from '#lib/entities/request';
import type { AnswerContext } from './answer-bundle.ts';
import { codingsOf, extensionOf, isRecord, MAX_LIST_READ, recordsOf, UnreadableAnswer } from './answer-json.ts';
import { authorizationNumberOf, codeAndSystemOf, periodOf, quantityOf, sequenceOf } from './answer-values.ts';
import {
  MAX_REASONS,
  type ReviewAction,
  reasonsOfCode,
  reviewActionOf,
  statusOfReviewAction,
} from './review-actions.ts';

/*
 * A ClaimResponse's items, one AuthorizationItem each (docs/payer-api.md, "Items"). PAS keys
 * everything by the Claim item's sequence: ClaimResponse.item.itemSequence echoes it, an addItem
 * names it in itemSequence (what was authorized instead, for A6), and the Claim in the Bundle (when
 * the payer sends it back) holds the requested service.
 */

/** The most items an answer may have: beyond it, the answer is unreadable (a cut list would misstate the aggregate). */
export const MAX_ITEMS = 100;

const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';
const PRE_AUTH_PERIOD = [`${PAS}extension-itemPreAuthPeriod`];
/** PAS 1.x: "the date/period by which the item that is pre-authorized must be completed". */
const AUTHORIZED_DATE = [`${PAS}extension-itemAuthorizedDate`];
const AUTHORIZED_DETAIL = [`${PAS}extension-itemAuthorizedDetail`];
const AUTHORIZATION_NUMBER = [`${PAS}extension-authorizationNumber`];
const REQUESTED_SERVICE = [`${PAS}extension-requestedService`];
/** The Claim's `productOrService` when an inquiry names no service: no code at all (PAS spec-43). */
const DATA_ABSENT = 'http://terminology.hl7.org/CodeSystem/data-absent-reason';

/** What an item is read with besides itself. */
export interface ItemSources {
  context: AnswerContext;
  /** The review action of the ClaimResponse's header: it stands for items that carry none. */
  header: ReviewAction | null;
  /** ClaimResponse.preAuthPeriod: the period of approved items that name none. */
  headerPeriod: Period | undefined;
  /** The ClaimResponse's process notes by number, as reasons. */
  notes: ReadonlyMap<number, AuthorizationReason>;
}

type Dated = { extension?: Extension[]; servicedPeriod?: Period; servicedDate?: string };

/** The sub-extension `name` of the itemAuthorizedDetail extension of an element. */
const authorizedDetail = (element: { extension?: Extension[] } | undefined, name: string): Extension | undefined =>
  extensionOf(extensionOf(element, AUTHORIZED_DETAIL), [name]);

/**
 * The period the item is authorized for: what the addItem that stands for it says (its preAuthPeriod,
 * else its serviced date or period), else the item's preAuthPeriod (or PAS 1.x's authorizedDate; a date
 * alone is the day by which the service must be done: the period's end), else for an approval the
 * header's preAuthPeriod.
 */
const authorizedPeriodOf = (
  item: ClaimResponseItem,
  added: Dated | undefined,
  approved: boolean,
  sources: ItemSources,
) => {
  const authorizedDate = extensionOf(item, AUTHORIZED_DATE);
  const byDate = periodOf({ end: authorizedDate?.valueDateTime ?? authorizedDate?.valueDate });
  return (
    periodOf(extensionOf(added, PRE_AUTH_PERIOD)?.valuePeriod) ??
    periodOf(added?.servicedPeriod) ??
    periodOf({ start: added?.servicedDate, end: added?.servicedDate }) ??
    periodOf(extensionOf(item, PRE_AUTH_PERIOD)?.valuePeriod) ??
    periodOf(authorizedDate?.valuePeriod) ??
    byDate ??
    (approved ? periodOf(sources.headerPeriod) : null)
  );
};

/**
 * The quantity authorized: the addItem's quantity (or its itemAuthorizedDetail's), else, for an item
 * certified in total (A1), the item's own itemAuthorizedDetail (on an item, PAS says it holds what
 * was asked: only A1 makes that what was granted), else the value of an adjudication that is not the
 * fixed `submitted` one.
 */
const authorizedQuantityOf = (
  item: ClaimResponseItem,
  added: ClaimResponseAddItem | undefined,
  code: string | null,
) => {
  const adjudicated = recordsOf<ClaimResponseItemAdjudication>(item.adjudication, MAX_LIST_READ).find(
    (adjudication) =>
      typeof adjudication.value === 'number' &&
      !codingsOf(adjudication.category).some((coding) => coding.code === 'submitted'),
  );
  return (
    quantityOf(added?.quantity) ??
    quantityOf(authorizedDetail(added, 'quantity')?.valueQuantity) ??
    (code === 'A1' ? quantityOf(authorizedDetail(item, 'quantity')?.valueQuantity) : null) ??
    quantityOf({ value: adjudicated?.value })
  );
};

/** The first coding of a concept whose code and system are in form, unless the concept says "no code". */
const serviceCodeOfConcept = (concept: unknown) => {
  const codings = codingsOf(concept);
  if (codings.some((coding) => coding.system === DATA_ABSENT)) return null;
  for (const coding of codings) {
    const coded = codeAndSystemOf(coding);
    if (coded) return coded;
  }
  return null;
};

/** The code of the resource a Claim item's requestedService extension references, when the Bundle holds it. */
const requestedServiceCodeOf = (claimItem: ClaimItem | undefined, sources: ItemSources) => {
  const requested = sources.context.resolve(extensionOf(claimItem, REQUESTED_SERVICE)?.valueReference);
  if (!isRecord(requested)) return null;
  return serviceCodeOfConcept(requested.code ?? requested.codeCodeableConcept ?? requested.medicationCodeableConcept);
};

/**
 * The requested service's code: the Claim item's productOrService (the Claim in the answer's Bundle),
 * else the service its requestedService extension references, else the code the ClaimResponse item's
 * itemAuthorizedDetail names (on an item: what was asked).
 */
const serviceCodeOf = (item: ClaimResponseItem, claimItem: ClaimItem | undefined, sources: ItemSources) =>
  serviceCodeOfConcept(claimItem?.productOrService) ??
  requestedServiceCodeOf(claimItem, sources) ??
  serviceCodeOfConcept(authorizedDetail(item, 'productOrServiceCode')?.valueCodeableConcept);

/** The notes an item names by number (ClaimResponse.item.noteNumber). */
const notesOfItem = (item: ClaimResponseItem, notes: ReadonlyMap<number, AuthorizationReason>) =>
  (Array.isArray(item.noteNumber) ? item.noteNumber.slice(0, MAX_LIST_READ) : [])
    .map((number) => (typeof number === 'number' ? notes.get(number) : undefined))
    .filter((note) => note !== undefined);

/** Elements of a list keyed by the sequences they carry; the first of a sequence wins. */
const bySequence = <T extends object>(list: unknown, sequencesOf: (element: T) => unknown[]): Map<unknown, T> => {
  const map = new Map<unknown, T>();
  for (const element of recordsOf<T>(list, MAX_ITEMS * 2)) {
    for (const sequence of sequencesOf(element)) if (!map.has(sequence)) map.set(sequence, element);
  }
  return map;
};

const itemOf = (
  item: ClaimResponseItem,
  related: { claimItem: ClaimItem | undefined; added: ClaimResponseAddItem | undefined },
  sources: ItemSources,
): AuthorizationItem => {
  const sequence = sequenceOf(item.itemSequence);
  const action = reviewActionOf(item) ?? sources.header;
  const code = action?.code ?? null;
  // No code for the item, nor on the header: the payer has not said what it decided.
  const status = code === null ? 'pending' : statusOfReviewAction(code)!;
  return {
    sequence,
    serviceCode: serviceCodeOf(item, related.claimItem, sources),
    status,
    reviewActionCode: code,
    number:
      action?.number ??
      authorizationNumberOf(extensionOf(item, AUTHORIZATION_NUMBER)?.valueString, "an item's authorization number"),
    authorizedPeriod: authorizedPeriodOf(
      item,
      related.added,
      status === 'approved' || status === 'partially_approved',
      sources,
    ),
    authorizedQuantity: authorizedQuantityOf(item, related.added, code),
    reasons: [...reasonsOfCode(code), ...(action?.reasons ?? []), ...notesOfItem(item, sources.notes)].slice(
      0,
      MAX_REASONS,
    ),
  };
};

/**
 * The ClaimResponse's items in sequence order. An item that is not an object, has no sequence in form,
 * repeats another's sequence, or past MAX_ITEMS makes the answer unreadable: each item is a decision,
 * and one lost would change the aggregate. An addItem whose itemSequence names no item is a service
 * the payer added of its own: it is not one of ours and is not read.
 */
export const itemsOf = (response: ClaimResponse, sources: ItemSources): AuthorizationItem[] => {
  const items: unknown = response.item;
  if (items === undefined) return [];
  if (!Array.isArray(items) || items.length > MAX_ITEMS || !items.every(isRecord)) {
    throw new UnreadableAnswer(`the ClaimResponse's items are not a list of at most ${MAX_ITEMS} objects`);
  }
  const claim: Claim | undefined = sources.context.claim;
  const claimItems = bySequence<ClaimItem>(claim?.item, (claimItem) => [claimItem.sequence]);
  // An addItem names the items it stands for (itemSequence is a list in R4).
  const addItems = bySequence<ClaimResponseAddItem>(response.addItem, (added) =>
    Array.isArray(added.itemSequence) ? added.itemSequence.slice(0, MAX_ITEMS) : [],
  );
  const read = (items as unknown as ClaimResponseItem[]).map((item) =>
    itemOf(item, { claimItem: claimItems.get(item.itemSequence), added: addItems.get(item.itemSequence) }, sources),
  );
  if (new Set(read.map((item) => item.sequence)).size !== read.length) {
    throw new UnreadableAnswer('two items of the ClaimResponse have the same sequence');
  }
  return read.sort((a, b) => a.sequence - b.sequence);
};
