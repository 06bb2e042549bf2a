import type { Bundle, ClaimResponseItem } from '@medplum/fhirtypes';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ItemStatus, PasAnswer } from '#lib/payer-api/pas/answer-model';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import { aggregateStatus } from '#lib/payer-api/pas/review-actions';
import {
  asParsed,
  claimResponse,
  decidedItem,
  homecareAnswer,
  indexR4,
  PAS,
  responseBundle,
  reviewAction,
  SUBMITTED,
  validR4,
  X12_306,
} from './pas-answer-examples.ts';

const read = (answer: Bundle) => readPasAnswer(asParsed(validR4(answer)));
const decisionOf = (answer: PasAnswer) => {
  if (answer.kind !== 'decision') throw new Error(`expected a decision, got ${JSON.stringify(answer)}`);
  return answer.decision;
};
const UNREADABLE_CODE = {
  kind: 'invalid',
  reason: 'a review action code is not one of X12 306 (A1, A2, A3, A4, A6, C, CT, NA)',
};

beforeAll(indexR4);

describe('X12 306 review actions onto item statuses', () => {
  it.each([
    ['A1', 'approved'],
    ['A2', 'partially_approved'],
    ['A3', 'denied'],
    ['A4', 'pending'],
    ['A6', 'partially_approved'],
    ['C', 'cancelled'],
    ['CT', 'pending'],
    ['NA', 'approved'],
  ])('reads %s as %s, for the item and for the whole', (code, status) => {
    const decision = decisionOf(read(homecareAnswer([code])));
    expect(decision.items).toMatchObject([{ sequence: 1, status, reviewActionCode: code }]);
    expect(decision.status).toBe(status);
    expect(decision.decisionDate).toBe(status === 'pending' ? null : '2005-05-02');
  });

  it('gives an NA item a reason saying no authorization is needed', () => {
    expect(decisionOf(read(homecareAnswer(['NA']))).items[0]?.reasons).toEqual([
      { system: X12_306, code: 'NA', text: 'No action required: the payer needs no authorization for this service.' },
    ]);
    expect(decisionOf(read(homecareAnswer(['A1']))).items[0]?.reasons).toEqual([]);
  });

  it('reads the review action where PAS 1.x put it (on the item, X12 over http) and a bare reviewActionCode', () => {
    const onItem: ClaimResponseItem = {
      itemSequence: 1,
      adjudication: [SUBMITTED],
      extension: [
        {
          url: `${PAS}extension-reviewAction`,
          extension: [
            { url: 'number', valueString: 'AUTH0001' },
            {
              url: `${PAS}extension-reviewActionCode`,
              valueCodeableConcept: { coding: [{ system: 'http://codesystem.x12.org/005010/306', code: 'A1' }] },
            },
          ],
        },
      ],
    };
    const bare: ClaimResponseItem = {
      itemSequence: 2,
      adjudication: [SUBMITTED],
      extension: [{ url: `${PAS}extension-reviewActionCode`, valueCodeableConcept: { coding: [{ code: 'A3' }] } }],
    };
    const decision = decisionOf(read(homecareAnswer([], { item: [onItem, bare] })));
    expect(decision.items).toMatchObject([
      { sequence: 1, status: 'approved', reviewActionCode: 'A1', number: 'AUTH0001' },
      { sequence: 2, status: 'denied', reviewActionCode: 'A3', number: null },
    ]);
    expect(decision.status).toBe('partially_approved');
  });

  it('reads a code sub-extension named by its slice, and a valueCoding', () => {
    const sliceNamed: ClaimResponseItem = {
      itemSequence: 1,
      adjudication: [
        {
          category: { coding: [{ code: 'submitted' }] },
          extension: [
            {
              url: `${PAS}extension-reviewAction`,
              extension: [{ url: 'code', valueCoding: { system: X12_306, code: 'A2' } }],
            },
          ],
        },
      ],
    };
    expect(decisionOf(read(homecareAnswer([], { item: [sliceNamed] }))).items[0]).toMatchObject({
      status: 'partially_approved',
      reviewActionCode: 'A2',
    });
  });

  it('lets the header’s review action decide without items, and stand for items that carry none', () => {
    const header = [
      { category: { coding: [{ code: 'submitted' }] }, extension: [reviewAction('A3', { reasons: ['0U'] })] },
    ];
    const alone = decisionOf(read(responseBundle(claimResponse('Header', { adjudication: header }))));
    expect(alone).toMatchObject({ status: 'denied', items: [], reasons: [{ code: '0U' }] });
    const inherited = decisionOf(
      read(homecareAnswer([], { adjudication: header, item: [decidedItem(1, null), decidedItem(2, 'A1')] })),
    );
    expect(inherited.items).toMatchObject([
      { sequence: 1, status: 'denied', reviewActionCode: 'A3' },
      { sequence: 2, status: 'approved', reviewActionCode: 'A1' },
    ]);
    const na = decisionOf(
      read(
        responseBundle(claimResponse('Header', { adjudication: [{ ...header[0]!, extension: [reviewAction('NA')] }] })),
      ),
    );
    expect(na).toMatchObject({ status: 'approved', reasons: [{ code: 'NA' }] });
  });

  it('reads an item without any review action as pending (nothing decided was said)', () => {
    const decision = decisionOf(read(homecareAnswer([null, 'A1'])));
    expect(decision.items).toMatchObject([
      { sequence: 1, status: 'pending', reviewActionCode: null },
      { sequence: 2, status: 'approved' },
    ]);
    expect(decision).toMatchObject({ status: 'pending', decisionDate: null });
  });

  it('reads a ClaimResponse without items and without a header action: queued is pending, complete is unreadable', () => {
    expect(decisionOf(read(responseBundle(claimResponse('Queued', { outcome: 'queued' }))))).toMatchObject({
      status: 'pending',
      items: [],
      decisionDate: null,
    });
    expect(read(responseBundle(claimResponse('Nothing')))).toEqual({
      kind: 'invalid',
      reason: 'the ClaimResponse decides no item and carries no review action of its own',
    });
  });

  it('is invalid for a code outside the table, in another code system, or not a code', () => {
    for (const code of ['A5', 'a1', 'D', 'APPROVED', 'A1\u200b']) {
      expect(read(homecareAnswer([code]))).toEqual(UNREADABLE_CODE);
    }
    // Not even R4 codes (the validator refuses them), as a broken payer may send them.
    for (const code of ['A1 ', '', ' A1']) {
      expect(readPasAnswer(asParsed(homecareAnswer([code])))).toEqual(UNREADABLE_CODE);
    }
    const foreign = homecareAnswer(['A1']);
    const item = (foreign.entry![0]!.resource as { item: ClaimResponseItem[] }).item[0]!;
    item.adjudication![0]!.extension![0]!.extension![0]!.valueCodeableConcept = {
      coding: [{ system: 'http://payer.example/codes', code: 'A1' }],
    };
    expect(read(foreign)).toEqual(UNREADABLE_CODE);
  });

  it('is invalid when one item’s adjudications disagree, and reads them when they agree', () => {
    const twice = (second: string): ClaimResponseItem => {
      const item = decidedItem(1, 'A1', { reasons: ['0A'] });
      item.adjudication!.push({
        category: { coding: [{ code: 'submitted' }] },
        extension: [reviewAction(second, { reasons: ['0B'] })],
      });
      return item;
    };
    expect(read(homecareAnswer([], { item: [twice('A3')] }))).toEqual({
      kind: 'invalid',
      reason: 'one item carries review actions that disagree',
    });
    expect(decisionOf(read(homecareAnswer([], { item: [twice('A1')] }))).items[0]).toMatchObject({
      status: 'approved',
      reasons: [{ code: '0A' }, { code: '0B' }],
    });
  });
});

describe('the aggregate of the items', () => {
  it.each([
    [['A1', 'A1'], 'approved'],
    [['A3', 'A3'], 'denied'],
    [['A1', 'A3'], 'partially_approved'],
    [['A1', 'A2'], 'partially_approved'],
    [['A1', 'A6'], 'partially_approved'],
    [['A1', 'A4'], 'pending'],
    [['A3', 'CT'], 'pending'],
    [['A1', 'C'], 'approved'],
    [['A3', 'C'], 'denied'],
    [['C', 'C'], 'cancelled'],
    [['NA', 'A1'], 'approved'],
    [['NA', 'A3'], 'partially_approved'],
  ])('reads items %j as %s', (codes, status) => {
    expect(decisionOf(read(homecareAnswer(codes))).status).toBe(status);
  });

  it('is pending exactly when an item is, ignores order, and is not moved by a cancelled item beside others', () => {
    const statuses: ItemStatus[] = ['approved', 'partially_approved', 'denied', 'pending', 'cancelled'];
    const mixes = fc.array(fc.constantFrom(...statuses), { minLength: 1, maxLength: 100 });
    fc.assert(fc.property(mixes, (items) => (aggregateStatus(items) === 'pending') === items.includes('pending')));
    fc.assert(fc.property(mixes, (items) => aggregateStatus(items) === aggregateStatus([...items].reverse())));
    fc.assert(fc.property(mixes, (items) => aggregateStatus([...items, 'cancelled']) === aggregateStatus(items)));
    fc.assert(
      fc.property(mixes, (items) =>
        items.includes('partially_approved') && !items.includes('pending')
          ? aggregateStatus(items) === 'partially_approved'
          : true,
      ),
    );
    expect(aggregateStatus([])).toBeUndefined();
  });
});
