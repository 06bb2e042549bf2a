import type {
  ClaimResponse,
  ClaimResponseError,
  ClaimResponseItem,
  ClaimResponseProcessNote,
} from '@medplum/fhirtypes';
import type { AuthorizationItem, AuthorizationReason, AuthorizationStatus } from '#lib/entities/request';
import { type AnswerContext, claimIdentifierOf } from './answer-bundle.ts';
import { extensionOf, MAX_LIST_READ, recordsOf, UnreadableAnswer } from './answer-json.ts';
import type { PasAnswer, PayerDecision } from './answer-model.ts';
import { authorizationNumberOf, dayOf, reasonOf, resourceIdOf, textOf } from './answer-values.ts';
import { itemsOf, MAX_ITEMS } from './claim-response-items.ts';
import { informationRequestedOf } from './information-requests.ts';
import { issuesOfClaimResponseErrors } from './operation-outcome.ts';
import {
  aggregateStatus,
  MAX_REASONS,
  type ReviewAction,
  reasonsOfCode,
  reviewActionOf,
  statusOfReviewAction,
} from './review-actions.ts';

/*
 * A ClaimResponse as our decision (docs/payer-api.md, "The decision"): a refusal when its outcome is `error`,
 * else the decision its items (or, without items, its header) carry.
 */

const AUTHORIZATION_NUMBER = ['http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-authorizationNumber'];

/**
 * The process notes (X12 MSG, PAS: the reason for a denial) as reasons `{system: null, code: 'note',
 * text}`, by number; a note without a text in form is not kept, one without a number applies to the whole.
 */
const notesOf = (response: ClaimResponse) => {
  const byNumber = new Map<number, AuthorizationReason>();
  const unnumbered: AuthorizationReason[] = [];
  for (const note of recordsOf<ClaimResponseProcessNote>(response.processNote, MAX_LIST_READ)) {
    const text = textOf(note.text);
    if (text === null) continue;
    const reason: AuthorizationReason = { system: null, code: 'note', text };
    if (typeof note.number === 'number' && !byNumber.has(note.number)) byNumber.set(note.number, reason);
    else unnumbered.push(reason);
  }
  return { byNumber, unnumbered };
};

/** The status of a ClaimResponse without items: its header's review action, else `queued` is pending. */
const statusOfHeader = (response: ClaimResponse, header: ReviewAction | null): AuthorizationStatus => {
  const status = header?.code ? statusOfReviewAction(header.code) : undefined;
  if (status !== undefined) return status;
  if (response.outcome === 'queued') return 'pending';
  throw new UnreadableAnswer('the ClaimResponse decides no item and carries no review action of its own');
};

/**
 * The reasons of the whole: the header's review action's (and NA's, when the header decides alone),
 * the codes of errors a ClaimResponse that is not in error still lists, and the notes no item names.
 */
const reasonsOfWhole = (
  response: ClaimResponse,
  header: ReviewAction | null,
  items: AuthorizationItem[],
  notes: ReturnType<typeof notesOf>,
): AuthorizationReason[] => {
  const named = new Set(
    recordsOf<ClaimResponseItem>(response.item, MAX_ITEMS).flatMap((item) =>
      Array.isArray(item.noteNumber) ? item.noteNumber.slice(0, MAX_LIST_READ) : [],
    ),
  );
  const errors = recordsOf<ClaimResponseError>(response.error, MAX_LIST_READ)
    .map((error) => reasonOf(error.code))
    .filter((reason) => reason !== null);
  return [
    ...(items.length === 0 ? reasonsOfCode(header?.code ?? null) : []),
    ...(header?.reasons ?? []),
    ...errors,
    ...[...notes.byNumber].filter(([number]) => !named.has(number)).map(([, reason]) => reason),
    ...notes.unnumbered,
  ].slice(0, MAX_REASONS);
};

/**
 * The answer a ClaimResponse gives. Outcome `error`: refused, with its errors (even when it also lists
 * items: PAS sends errors for a request it did not adjudicate). Otherwise a decision: the aggregate of
 * the items, the number (preAuthRef, else the PAS authorizationNumber extension, else the first item's
 * in sequence order), the day of `created` unless pending.
 */
export const answerOfClaimResponse = (response: ClaimResponse, context: AnswerContext): PasAnswer => {
  if (response.outcome === 'error') return { kind: 'refused', issues: issuesOfClaimResponseErrors(response) };
  const header = reviewActionOf(response);
  const notes = notesOf(response);
  const items = itemsOf(response, {
    context,
    header,
    headerPeriod: response.preAuthPeriod,
    notes: notes.byNumber,
  });
  const status = aggregateStatus(items.map((item) => item.status)) ?? statusOfHeader(response, header);
  const number =
    authorizationNumberOf(response.preAuthRef, 'the authorization number (preAuthRef)') ??
    authorizationNumberOf(extensionOf(response, AUTHORIZATION_NUMBER)?.valueString, 'the authorization number') ??
    header?.number ??
    items.find((item) => item.number !== null)?.number ??
    null;
  const decision: PayerDecision = {
    status,
    number,
    decisionDate: status === 'pending' ? null : dayOf(response.created),
    claimResponseId: resourceIdOf(response.id),
    claimIdentifier: claimIdentifierOf(response, context),
    items,
    reasons: reasonsOfWhole(response, header, items, notes),
    informationRequested: informationRequestedOf(response, context, status),
  };
  return { kind: 'decision', decision };
};
