import type { ClaimResponse, CommunicationRequest, Reference } from '@medplum/fhirtypes';
import { DECISION_LIMITS, type RequestedInformation } from '#lib/entities/request';
import type { AnswerContext } from './answer-bundle.ts';
import { codingsOf, extensionOf, isRecord, MAX_LIST_READ, recordsOf } from './answer-json.ts';
import type { PayerDecision } from './answer-model.ts';
import { codeAndSystemOf, codeOf, dateOrDateTimeOf, textOf } from './answer-values.ts';

/*
 * What a pended ClaimResponse asks for before the payer decides (docs/payer-api.md, "More information
 * requested"): PAS puts each request in a PASCommunicationRequest that ClaimResponse.communicationRequest
 * references, in the response Bundle. Its payload's contentString is a LOINC attachment code (the X12
 * PWK/HI request), its category the X12 755 report type, its serviceLineNumber the Claim item it is about.
 */

const LOINC = 'http://loinc.org';
const SERVICE_LINE_NUMBER = ['http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-serviceLineNumber'];
/** The highest item sequence a request may name (as an item's: answer-values.ts). */
const MAX_SEQUENCE = 10_000;

/** The code asked for: the payload's LOINC code, else the category's first coding in form. */
const codeOfRequest = (request: CommunicationRequest) => {
  for (const payload of recordsOf<{ contentString?: unknown }>(request.payload, MAX_LIST_READ)) {
    const code = codeOf(payload.contentString);
    if (code !== null) return { system: LOINC, code };
  }
  for (const coding of recordsOf(request.category, MAX_LIST_READ).flatMap((concept) => codingsOf(concept))) {
    const coded = codeAndSystemOf(coding);
    if (coded) return coded;
  }
  return null;
};

/** The words of the request: its first note, else its category's text or display (each checked as any text). */
const textOfRequest = (request: CommunicationRequest) => {
  const notes = recordsOf<{ text?: unknown }>(request.note, MAX_LIST_READ).map((note) => textOf(note.text));
  const categories = recordsOf<{ text?: unknown }>(request.category, MAX_LIST_READ).flatMap((concept) => [
    textOf(concept.text),
    ...codingsOf(concept).map((coding) => textOf(coding.display)),
  ]);
  return [...notes, ...categories].find((text) => text !== null) ?? null;
};

const sequenceOfRequest = (request: CommunicationRequest) => {
  const value = extensionOf(request, SERVICE_LINE_NUMBER)?.valuePositiveInt;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= MAX_SEQUENCE ? value : null;
};

/** By when the payer wants it: occurrenceDateTime, else the end of occurrencePeriod. */
const dueByOfRequest = (request: CommunicationRequest) =>
  dateOrDateTimeOf(request.occurrenceDateTime) ??
  dateOrDateTimeOf(isRecord(request.occurrencePeriod) ? request.occurrencePeriod.end : undefined);

/** The earliest of due dates and date-times, compared by their day and then as written. */
const earliest = (values: string[]) => values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[0] ?? null;

/**
 * The information a pended ClaimResponse asks for, or null. Only a pended answer asks (a decided one's
 * requests are moot); only an `active` CommunicationRequest asks (PAS fixes the status; a completed
 * one was answered); one whose code is out of form is passed over, as is a duplicate of code and item.
 * At most DECISION_LIMITS.requestedInformation items, in the payer's order; dueBy is the earliest.
 */
export const informationRequestedOf = (
  response: ClaimResponse,
  context: AnswerContext,
  status: PayerDecision['status'],
): PayerDecision['informationRequested'] => {
  if (status !== 'pending') return null;
  const items: RequestedInformation[] = [];
  const dueDates: string[] = [];
  const seen = new Set<string>();
  for (const reference of recordsOf<Reference>(response.communicationRequest, MAX_LIST_READ)) {
    const request = context.resolve(reference);
    if (request?.resourceType !== 'CommunicationRequest' || request.status !== 'active') continue;
    const code = codeOfRequest(request);
    if (code === null) continue;
    const sequence = sequenceOfRequest(request);
    const key = JSON.stringify([code.system, code.code, sequence]);
    if (seen.has(key) || items.length >= DECISION_LIMITS.requestedInformation) continue;
    seen.add(key);
    items.push({ code, text: textOfRequest(request), sequence });
    const dueBy = dueByOfRequest(request);
    if (dueBy !== null) dueDates.push(dueBy);
  }
  return items.length === 0 ? null : { dueBy: earliest(dueDates), items };
};
