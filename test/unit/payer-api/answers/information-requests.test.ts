import type { Bundle, CommunicationRequest } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PasAnswer } from '#lib/payer-api/pas/answer-model';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import {
  asParsed,
  claimResponse,
  decidedItem,
  indexR4,
  PAS,
  ReferralAuthorizationExample,
  responseBundle,
  validR4,
} from './pas-answer-examples.ts';

/*
 * A pended answer's request for more information (docs/payer-api.md, "More information requested"):
 * PAS's CommunicationRequests, referenced by ClaimResponse.communicationRequest, read as codes, words,
 * items and a due date, each checked before it is kept.
 */
beforeAll(indexR4);

const LOINC = 'http://loinc.org';

/** A PASCommunicationRequest as the IG's example shapes it, asking for `loinc`. */
const asking = (id: string, loinc: string, fields: Partial<CommunicationRequest> = {}): CommunicationRequest => ({
  resourceType: 'CommunicationRequest',
  id,
  identifier: [{ system: 'http://example.org/CRD-ID', value: id }],
  status: 'active',
  payload: [{ contentString: loinc }],
  ...fields,
});

/** The IG's referral answered with `code` (A4 pended) and these requests referenced and carried. */
const answer = (code: string, requests: CommunicationRequest[], referenced = requests): Bundle =>
  responseBundle(
    claimResponse('PendedResponse', {
      item: [decidedItem(1, code)],
      communicationRequest: referenced.map((request) => ({
        reference: `http://example.org/fhir/CommunicationRequest/${request.id}`,
      })),
    }),
    [ReferralAuthorizationExample, ...requests],
  );

/** What the answer asks; `valid: false` for an answer R4 itself refuses (a payer's bad date). */
const informationOf = (bundle: Bundle, valid = true) => {
  const read: PasAnswer = readPasAnswer(asParsed(valid ? validR4(bundle) : bundle));
  if (read.kind !== 'decision') throw new Error(`expected a decision, got ${JSON.stringify(read)}`);
  return read.decision.informationRequested;
};

describe('the information a pended answer asks for', () => {
  it("reads each CommunicationRequest's LOINC code, item, words and the earliest due date", () => {
    const plan = asking('plan', '18776-5', {
      extension: [{ url: `${PAS}extension-serviceLineNumber`, valuePositiveInt: 1 }],
      note: [{ text: 'Plan of care,\n signed.' }],
      occurrenceDateTime: '2005-05-20',
    });
    const notes = asking('notes', '11506-3', {
      category: [
        { coding: [{ system: 'https://codesystem.x12.org/005010/755', code: '09', display: 'Progress report' }] },
      ],
      occurrencePeriod: { start: '2005-05-02', end: '2005-05-16T17:00:00-05:00' },
    });
    expect(informationOf(answer('A4', [plan, notes]))).toEqual({
      dueBy: '2005-05-16T17:00:00-05:00',
      items: [
        { code: { system: LOINC, code: '18776-5' }, text: 'Plan of care, signed.', sequence: 1 },
        { code: { system: LOINC, code: '11506-3' }, text: 'Progress report', sequence: null },
      ],
    });
  });

  it('takes the X12 755 category when no payload names a code, and gives no due date when none is said', () => {
    const report = asking('report', '', {
      payload: undefined,
      category: [{ coding: [{ system: 'https://codesystem.x12.org/005010/755', code: '15' }] }],
    });
    expect(informationOf(answer('A4', [report]))).toEqual({
      dueBy: null,
      items: [{ code: { system: 'https://codesystem.x12.org/005010/755', code: '15' }, text: null, sequence: null }],
    });
  });

  it('is null when nothing is asked, the answer is decided, or every request is answered, unresolvable or out of form', () => {
    const plan = asking('plan', '18776-5');
    expect(informationOf(answer('A4', []))).toBeNull();
    expect(informationOf(answer('A1', [plan]))).toBeNull();
    expect(informationOf(answer('A4', [asking('done', '18776-5', { status: 'completed' })]))).toBeNull();
    // Referenced but not in the Bundle: nothing to read it from.
    expect(informationOf(answer('A4', [], [plan]))).toBeNull();
    expect(informationOf(answer('A4', [asking('bad', '18776-5; DROP')]))).toBeNull();
  });

  it('keeps no hostile words, no date that is not one, no sequence out of range, and no more than 20 items', () => {
    const hostile = asking('hostile', '18776-5', {
      note: [{ text: 'Jane \u202eExample' }],
      occurrenceDateTime: '2005-02-30',
      extension: [{ url: `${PAS}extension-serviceLineNumber`, valuePositiveInt: 1_000_000 }],
    });
    expect(informationOf(answer('A4', [hostile]), false)).toEqual({
      dueBy: null,
      items: [{ code: { system: LOINC, code: '18776-5' }, text: null, sequence: null }],
    });
    const many = Array.from({ length: 30 }, (_, index) => asking(`r${index}`, `${10000 + index}-1`));
    expect(informationOf(answer('A4', many))?.items).toHaveLength(20);
    // The same code for the same item twice is asked once.
    expect(informationOf(answer('A4', [asking('a', '18776-5'), asking('b', '18776-5')]))?.items).toHaveLength(1);
  });
});
