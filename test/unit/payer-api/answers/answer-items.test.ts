import type { Bundle, ClaimResponse, ClaimResponseItem, Extension, ServiceRequest } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PasAnswer } from '#lib/payer-api/pas/answer-model';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import {
  asParsed,
  claimResponse,
  decidedItem,
  HCPCS,
  HomecareAuthorizationExample,
  homecareAnswer,
  indexR4,
  PAS,
  PractitionerRequestorResponseExample,
  ReferralAuthorizationExample,
  responseBundle,
  SUBMITTED,
  validR4,
  X12_886,
  X12_1365,
} from './pas-answer-examples.ts';

const read = (answer: Bundle | ClaimResponse) => readPasAnswer(asParsed(validR4(answer)));
const decisionOf = (answer: PasAnswer) => {
  if (answer.kind !== 'decision') throw new Error(`expected a decision, got ${JSON.stringify(answer)}`);
  return answer.decision;
};
const itemsOf = (answer: PasAnswer) => decisionOf(answer).items;

const preAuthPeriod = (start: string, end: string): Extension => ({
  url: `${PAS}extension-itemPreAuthPeriod`,
  valuePeriod: { start, end },
});
const authorizedDetail = (...extension: Extension[]): Extension => ({
  url: `${PAS}extension-itemAuthorizedDetail`,
  extension,
});

beforeAll(indexR4);

describe('an item’s service code', () => {
  it('is the Claim item’s productOrService when the payer echoes the Claim, matched by sequence', () => {
    const answer = homecareAnswer([], { item: [decidedItem(2, 'A1'), decidedItem(1, 'A3')] });
    expect(itemsOf(read(answer))).toMatchObject([
      { sequence: 1, status: 'denied', serviceCode: { system: HCPCS, code: 'G0154' } },
      { sequence: 2, status: 'approved', serviceCode: { system: HCPCS, code: 'B4184' } },
    ]);
  });

  it('is the only Claim’s when ClaimResponse.request names none in the Bundle, none when two Claims are there', () => {
    const unnamed = homecareAnswer(['A1'], { request: { identifier: { value: '111099' } } });
    expect(itemsOf(read(unnamed))[0]?.serviceCode).toEqual({ system: HCPCS, code: 'G0154' });
    const two = responseBundle(
      claimResponse('Two', { request: { identifier: { value: '111099' } }, item: [decidedItem(1, 'A1')] }),
      [HomecareAuthorizationExample, ReferralAuthorizationExample],
    );
    expect(itemsOf(read(two))[0]?.serviceCode).toBeNull();
  });

  it('is the requested service’s code when the Claim item names no product (data absent)', () => {
    const service: ServiceRequest = {
      resourceType: 'ServiceRequest',
      id: 'ReferralRequestExample',
      status: 'active',
      intent: 'order',
      subject: { reference: 'Patient/SubscriberExample' },
      code: { coding: [{ system: X12_1365, code: '3', display: 'Consultation' }] },
    };
    const claim = structuredClone(ReferralAuthorizationExample);
    claim.item![0]!.productOrService = {
      coding: [{ system: 'http://terminology.hl7.org/CodeSystem/data-absent-reason', code: 'not-applicable' }],
    };
    claim.item![0]!.extension!.push({
      url: `${PAS}extension-requestedService`,
      valueReference: { reference: 'ServiceRequest/ReferralRequestExample' },
    });
    const answer = responseBundle(claimResponse('Referral', { item: [decidedItem(1, 'A1')] }), [claim, service]);
    expect(itemsOf(read(answer))[0]?.serviceCode).toEqual({ system: X12_1365, code: '3' });
  });

  it('is the item’s itemAuthorizedDetail code without a Claim, and null without any', () => {
    expect(itemsOf(read(PractitionerRequestorResponseExample))[0]?.serviceCode).toEqual({
      system: X12_1365,
      code: '3',
    });
    expect(itemsOf(read(claimResponse('Bare', { item: [decidedItem(1, 'A1')] })))[0]?.serviceCode).toBeNull();
  });

  it('drops a code or a system out of form, and takes the next coding in form', () => {
    const claim = structuredClone(HomecareAuthorizationExample);
    claim.item![0]!.productOrService = {
      coding: [
        { system: HCPCS, code: 'G0154 <b>' },
        { system: 'javascript:alert(1)', code: 'G0154' },
        { system: HCPCS, code: 'G0155' },
      ],
    };
    claim.item![1]!.productOrService = { coding: [{ system: HCPCS, code: 'X'.repeat(31) }] };
    const answer = responseBundle(
      claimResponse('R', {
        request: { reference: 'Claim/HomecareAuthorizationExample' },
        item: [decidedItem(1, 'A1'), decidedItem(2, 'A1')],
      }),
      [claim],
    );
    expect(itemsOf(read(answer)).map((item) => item.serviceCode)).toEqual([{ system: HCPCS, code: 'G0155' }, null]);
  });
});

describe('an item’s authorized period and quantity', () => {
  it('reads the item’s preAuthPeriod, and the header’s preAuthPeriod only for approvals', () => {
    const answer = homecareAnswer([], {
      preAuthPeriod: { start: '2005-05-01', end: '2005-12-31' },
      item: [decidedItem(1, 'A1', { extension: [preAuthPeriod('2005-05-02', '2005-06-02')] }), decidedItem(2, 'A1')],
    });
    expect(itemsOf(read(answer)).map((item) => item.authorizedPeriod)).toEqual([
      { start: '2005-05-02', end: '2005-06-02' },
      { start: '2005-05-01', end: '2005-12-31' },
    ]);
    const denied = homecareAnswer(['A3', 'A4'], { preAuthPeriod: { start: '2005-05-01', end: '2005-12-31' } });
    expect(itemsOf(read(denied)).map((item) => item.authorizedPeriod)).toEqual([null, null]);
  });

  it('reads what an addItem authorized instead (A6): its quantity, serviced period, preAuthPeriod', () => {
    const modified: ClaimResponse = claimResponse('Modified', {
      request: { reference: 'Claim/HomecareAuthorizationExample' },
      item: [
        decidedItem(1, 'A6', {
          number: 'AUTH0002',
          extension: [authorizedDetail({ url: 'quantity', valueQuantity: { value: 5, unit: 'visits' } })],
        }),
        decidedItem(2, 'A6'),
      ],
      addItem: [
        {
          itemSequence: [1],
          productOrService: { coding: [{ system: HCPCS, code: 'G0154' }] },
          servicedPeriod: { start: '2005-05-02', end: '2005-05-31' },
          quantity: { value: 3, unit: 'visits', code: 'VS' },
          adjudication: [SUBMITTED],
        },
        {
          itemSequence: [2],
          extension: [
            preAuthPeriod('2005-06-01', '2005-06-30'),
            authorizedDetail({ url: 'quantity', valueQuantity: { value: 2, code: 'UN' } }),
          ],
          productOrService: { coding: [{ system: HCPCS, code: 'B4184' }] },
          servicedDate: '2005-05-10',
          adjudication: [SUBMITTED],
        },
        {
          itemSequence: [9],
          productOrService: { coding: [{ system: HCPCS, code: 'B4185' }] },
          adjudication: [SUBMITTED],
        },
      ],
    });
    const items = itemsOf(read(responseBundle(modified, [HomecareAuthorizationExample])));
    expect(items).toEqual([
      expect.objectContaining({
        sequence: 1,
        status: 'partially_approved',
        number: 'AUTH0002',
        authorizedPeriod: { start: '2005-05-02', end: '2005-05-31' },
        authorizedQuantity: { value: 3, unit: 'visits' },
      }),
      expect.objectContaining({
        sequence: 2,
        authorizedPeriod: { start: '2005-06-01', end: '2005-06-30' },
        authorizedQuantity: { value: 2, unit: 'UN' },
      }),
    ]);
  });

  it('takes the item’s itemAuthorizedDetail quantity as authorized for A1 only (on an item it is what was asked)', () => {
    const detail = authorizedDetail({ url: 'quantity', valueQuantity: { value: 4 } });
    const answer = homecareAnswer([], {
      item: [decidedItem(1, 'A1', { extension: [detail] }), decidedItem(2, 'A2', { extension: [detail] })],
    });
    expect(itemsOf(read(answer)).map((item) => item.authorizedQuantity)).toEqual([{ value: 4, unit: null }, null]);
  });

  it('takes an adjudication’s value when its category is not the fixed `submitted`', () => {
    const item = decidedItem(1, 'A2');
    item.adjudication!.push({ category: { coding: [{ code: 'eligible' }] }, value: 2 });
    const submittedValue = decidedItem(2, 'A1');
    submittedValue.adjudication![0]!.value = 7;
    const items = itemsOf(read(homecareAnswer([], { item: [item, submittedValue] })));
    expect(items.map((read) => read.authorizedQuantity)).toEqual([{ value: 2, unit: null }, null]);
  });

  it('reads PAS 1.x’s itemAuthorizedDate: a period, or a date by which the service must be done', () => {
    const answer = homecareAnswer([], {
      item: [
        decidedItem(1, 'A1', {
          extension: [{ url: `${PAS}extension-itemAuthorizedDate`, valuePeriod: { start: '2005-05-02' } }],
        }),
        decidedItem(2, 'A1', {
          extension: [{ url: `${PAS}extension-itemAuthorizedDate`, valueDateTime: '2005-07-01T00:00:00-05:00' }],
        }),
      ],
    });
    expect(itemsOf(read(answer)).map((item) => item.authorizedPeriod)).toEqual([
      { start: '2005-05-02', end: null },
      { start: null, end: '2005-07-01' },
    ]);
  });

  it('drops dates that are not days and quantities out of range, and keeps the decision', () => {
    const answer = homecareAnswer([], {
      item: [
        decidedItem(1, 'A1', {
          extension: [
            preAuthPeriod('2005-02-30', '2005'),
            authorizedDetail({ url: 'quantity', valueQuantity: { value: 1e12 } }),
          ],
        }),
        decidedItem(2, 'A1', {
          extension: [
            preAuthPeriod('2005-02-28', '2005-13-01'),
            authorizedDetail({ url: 'quantity', valueQuantity: { value: 2.5, unit: 'mg<script>' } }),
          ],
        }),
      ],
    });
    // Days that do not exist are not R4 either: read without the validator, as a broken payer sends them.
    expect(
      itemsOf(readPasAnswer(asParsed(answer))).map(({ authorizedPeriod, authorizedQuantity }) => ({
        authorizedPeriod,
        authorizedQuantity,
      })),
    ).toEqual([
      { authorizedPeriod: null, authorizedQuantity: null },
      { authorizedPeriod: { start: '2005-02-28', end: null }, authorizedQuantity: { value: 2.5, unit: null } },
    ]);
  });
});

describe('numbers, dates and identifiers of the decision', () => {
  it('takes preAuthRef as the number, else the PAS authorizationNumber extension, else the first item’s', () => {
    const items = [decidedItem(2, 'A1', { number: 'ITEM-2' }), decidedItem(1, 'A1', { number: 'ITEM-1' })];
    expect(decisionOf(read(homecareAnswer([], { preAuthRef: 'PA-77', item: items }))).number).toBe('PA-77');
    const extension = [{ url: `${PAS}extension-authorizationNumber`, valueString: 'EXT-1' }];
    expect(decisionOf(read(homecareAnswer([], { extension, item: items }))).number).toBe('EXT-1');
    expect(decisionOf(read(homecareAnswer([], { item: items }))).number).toBe('ITEM-1');
    expect(decisionOf(read(homecareAnswer(['A3']))).number).toBeNull();
  });

  it('takes an item’s number from its review action, else from its authorizationNumber extension', () => {
    const item = decidedItem(1, 'A1', {
      extension: [{ url: `${PAS}extension-authorizationNumber`, valueString: 'REF-BB-1' }],
    });
    expect(itemsOf(read(homecareAnswer([], { item: [item] })))[0]?.number).toBe('REF-BB-1');
  });

  it('is invalid when a number is out of form (the provider quotes it to the payer: it is not guessed at)', () => {
    const cases: [Partial<ClaimResponse>, string][] = [
      [{ preAuthRef: 'PA 77' }, 'the authorization number (preAuthRef) is not 1 to 50 letters, digits or hyphens'],
      [
        { preAuthRef: 'A'.repeat(51) },
        'the authorization number (preAuthRef) is not 1 to 50 letters, digits or hyphens',
      ],
      [
        { item: [decidedItem(1, 'A1', { number: 'AUTH/1' })] },
        "an item's review number is not 1 to 50 letters, digits or hyphens",
      ],
      [
        {
          item: [
            decidedItem(1, 'A1', { extension: [{ url: `${PAS}extension-authorizationNumber`, valueString: 'x y' }] }),
          ],
        },
        "an item's authorization number is not 1 to 50 letters, digits or hyphens",
      ],
    ];
    for (const [fields, reason] of cases) {
      expect(read(homecareAnswer(['A1'], fields))).toEqual({ kind: 'invalid', reason });
    }
  });

  it('gives the day of created as it is written, whatever its zone, and null for a date that is no day', () => {
    expect(decisionOf(read(homecareAnswer(['A1'], { created: '2026-03-01T23:30:00-05:00' }))).decisionDate).toBe(
      '2026-03-01',
    );
    expect(decisionOf(read(homecareAnswer(['A1'], { created: '2026-03-01' }))).decisionDate).toBe('2026-03-01');
    expect(decisionOf(read(homecareAnswer(['A1'], { created: '2026-03' }))).decisionDate).toBeNull();
    expect(
      decisionOf(readPasAnswer(asParsed(homecareAnswer(['A1'], { created: '2026-02-30' })))).decisionDate,
    ).toBeNull();
  });

  it('names the ClaimResponse by its id, and the Claim by the identifier the payer echoes', () => {
    const withRequestIdentifier = homecareAnswer(['A1'], {
      request: { reference: 'Claim/HomecareAuthorizationExample', identifier: { value: 'TRN-0001' } },
    });
    expect(decisionOf(read(withRequestIdentifier))).toMatchObject({
      claimResponseId: 'HomecareResponse',
      claimIdentifier: 'TRN-0001',
    });
    const bare = claimResponse('Bare', {
      id: undefined,
      identifier: [{ value: 'has space' }],
      request: { reference: 'Claim/1' },
      item: [decidedItem(1, 'A1')],
    });
    expect(decisionOf(read(bare))).toMatchObject({ claimResponseId: null, claimIdentifier: null });
  });
});

describe('reasons', () => {
  it('keeps the X12 reason codes of each item, with their display', () => {
    const item: ClaimResponseItem = decidedItem(1, 'A3', { reasons: ['0U', 'CV'] });
    item.adjudication![0]!.extension![0]!.extension![1]!.valueCodeableConcept!.coding![0]!.display =
      'Additional patient information required';
    expect(itemsOf(read(homecareAnswer([], { item: [item] })))[0]?.reasons).toEqual([
      { system: X12_886, code: '0U', text: 'Additional patient information required' },
      { system: X12_886, code: 'CV', text: null },
    ]);
  });

  it('keeps process notes as reasons `note`: the item’s by noteNumber, the others for the whole', () => {
    const answer = homecareAnswer([], {
      item: [decidedItem(1, 'A3', { noteNumber: [2] }), decidedItem(2, 'A1')],
      processNote: [
        { number: 1, type: 'display', text: 'Request reviewed by a physician.' },
        { number: 2, type: 'display', text: 'Not medically necessary:\n conservative\ttherapy first.' },
      ],
    });
    const decision = decisionOf(read(answer));
    expect(decision.items[0]?.reasons).toEqual([
      { system: null, code: 'note', text: 'Not medically necessary: conservative therapy first.' },
    ]);
    expect(decision.items[1]?.reasons).toEqual([]);
    expect(decision.reasons).toEqual([{ system: null, code: 'note', text: 'Request reviewed by a physician.' }]);
  });

  it('keeps the codes of errors a ClaimResponse that is not in error lists (outcome partial)', () => {
    const answer = homecareAnswer(['A1'], {
      outcome: 'partial',
      error: [
        {
          code: {
            coding: [
              {
                system: 'https://codesystem.x12.org/005010/901',
                code: '15',
                display: 'Required application data missing',
              },
            ],
          },
        },
      ],
    });
    expect(decisionOf(read(answer)).reasons).toEqual([
      { system: 'https://codesystem.x12.org/005010/901', code: '15', text: 'Required application data missing' },
    ]);
  });

  it('keeps at most 20 reasons per item and for the whole, and texts of at most 500 characters', () => {
    const many = Array.from({ length: 30 }, (_, index) => `R${index}`);
    const answer = homecareAnswer([], {
      item: [decidedItem(1, 'A3', { reasons: many })],
      processNote: Array.from({ length: 30 }, (_, index) => ({
        number: index + 1,
        text: `${'é'.repeat(600)} ${index}`,
      })),
    });
    const decision = decisionOf(read(answer));
    expect(decision.items[0]?.reasons.map((reason) => reason.code)).toEqual(many.slice(0, 20));
    expect(decision.reasons).toHaveLength(20);
    const text = decision.reasons[0]?.text ?? '';
    expect(Array.from(text)).toHaveLength(500);
    expect(text.endsWith('…')).toBe(true);
  });
});
