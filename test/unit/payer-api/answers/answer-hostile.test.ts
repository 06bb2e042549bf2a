import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AuthorizationReason } from '#lib/entities/request';
import { AUTHORIZATION_STATUSES } from '#lib/entities/request';
import type { PasAnswer } from '#lib/payer-api/pas/answer-model';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import {
  asParsed,
  decidedItem,
  homecareAnswer,
  PASClaimInquiryOperationResponseExample,
  ReferralAuthorizationResponseBundleExample,
  returned,
} from './pas-answer-examples.ts';

/*
 * Answers a broken or hostile payer (or anyone between it and us) could send: wrong types, missing
 * fields, huge values, prototype keys. None of them is valid R4, so none goes through the validator.
 */

/** A text the payer wrote that must never reach an `invalid` reason (those are ours). */
const MARKER = 'PAYER-TEXT-7f3a';
const ITEM_STATUSES = new Set(['approved', 'partially_approved', 'denied', 'pending', 'cancelled']);
const UNSAFE_TEXT = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}]/u;

const storableReason = (reason: AuthorizationReason) =>
  /^[A-Za-z0-9][A-Za-z0-9._-]{0,29}$/.test(reason.code) &&
  (reason.system === null || reason.system.length <= 200) &&
  (reason.text === null || (Array.from(reason.text).length <= 500 && !UNSAFE_TEXT.test(reason.text)));

/** What every answer holds, whatever the payer sent: only values in form, within their bounds. */
const isStorable = (answer: PasAnswer): boolean => {
  switch (answer.kind) {
    case 'not_found':
      return Object.keys(answer).length === 1;
    case 'invalid':
      return answer.reason.length <= 120 && !answer.reason.includes(MARKER);
    case 'refused':
      return (
        answer.issues.length <= 20 &&
        answer.issues.every(
          (issue) =>
            ['fatal', 'error', 'warning', 'information'].includes(issue.severity) &&
            /^[A-Za-z0-9][A-Za-z0-9._-]{0,29}$/.test(issue.code) &&
            (issue.details === null || (Array.from(issue.details).length <= 500 && !UNSAFE_TEXT.test(issue.details))) &&
            issue.expression.length <= 10 &&
            issue.expression.every((expression) => /^[\x21-\x7E][\x20-\x7E]{0,299}$/.test(expression)),
        )
      );
    case 'decision': {
      const { decision } = answer;
      return (
        (AUTHORIZATION_STATUSES as readonly string[]).includes(decision.status) &&
        (decision.number === null || /^[A-Za-z0-9-]{1,50}$/.test(decision.number)) &&
        (decision.decisionDate === null || /^\d{4}-\d{2}-\d{2}$/.test(decision.decisionDate)) &&
        decision.items.length <= 100 &&
        decision.reasons.length <= 20 &&
        decision.reasons.every(storableReason) &&
        decision.items.every(
          (item) =>
            ITEM_STATUSES.has(item.status) &&
            Number.isSafeInteger(item.sequence) &&
            (item.number === null || /^[A-Za-z0-9-]{1,50}$/.test(item.number)) &&
            item.reasons.length <= 20 &&
            item.reasons.every(storableReason) &&
            (item.authorizedQuantity === null || Number.isFinite(item.authorizedQuantity.value)),
        )
      );
    }
  }
};

/** Sets `value` at `path` in a copy of `answer`, creating what is missing on the way. */
const withValueAt = (answer: unknown, path: (string | number)[], value: unknown): unknown => {
  const copy = asParsed(answer) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string | number, unknown>;
  }
  node[path.at(-1)!] = value;
  return copy;
};

const RESPONSE = ['entry', 0, 'resource'];
const ITEM = [...RESPONSE, 'item', 0];
const ACTION = [...ITEM, 'adjudication', 0, 'extension', 0];
/** Places in the approved example where a payer's value lands. */
const PLACES: (string | number)[][] = [
  ['resourceType'],
  ['type'],
  ['entry'],
  ['entry', 0],
  RESPONSE,
  [...RESPONSE, 'resourceType'],
  [...RESPONSE, 'outcome'],
  [...RESPONSE, 'preAuthRef'],
  [...RESPONSE, 'created'],
  [...RESPONSE, 'id'],
  [...RESPONSE, 'request'],
  [...RESPONSE, 'identifier'],
  [...RESPONSE, 'item'],
  [...RESPONSE, 'addItem'],
  [...RESPONSE, 'processNote'],
  [...RESPONSE, 'processNote', 0, 'text'],
  [...RESPONSE, 'error'],
  [...RESPONSE, 'adjudication'],
  ITEM,
  [...ITEM, 'itemSequence'],
  [...ITEM, 'noteNumber'],
  [...ITEM, 'extension'],
  [...ITEM, 'extension', 2, 'valuePeriod'],
  [...ITEM, 'extension', 4, 'extension', 2, 'valueQuantity'],
  [...ITEM, 'adjudication'],
  ACTION,
  [...ACTION, 'extension'],
  [...ACTION, 'extension', 0, 'valueString'],
  [...ACTION, 'extension', 1, 'valueCodeableConcept'],
  [...ACTION, 'extension', 1, 'valueCodeableConcept', 'coding', 0, 'code'],
  [...ACTION, 'extension', 1, 'valueCodeableConcept', 'coding', 0, 'system'],
];

/** Values a payer could put anywhere: JSON of any shape, texts with the marker, huge and hostile strings. */
const hostileValue = fc.oneof(
  fc.jsonValue(),
  fc.string().map((text) => `${text}${MARKER}`),
  fc.constantFrom(
    'A'.repeat(100_000),
    '\u202eA1',
    '__proto__',
    'constructor',
    'A1',
    'C',
    '2026-02-29',
    -1,
    1e308,
    Number.NaN,
    [],
    {},
    { __proto__: { code: 'A1' } },
  ),
);

describe('readPasAnswer on what a hostile payer sends', () => {
  it('never throws, and keeps only values in form, for any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => isStorable(readPasAnswer(body))),
      { numRuns: 500 },
    );
  });

  it('never throws, and keeps only values in form, when any value of a real answer is replaced', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PLACES), hostileValue, (path, value) =>
        isStorable(readPasAnswer(withValueAt(ReferralAuthorizationResponseBundleExample, path, value))),
      ),
      { numRuns: 1000 },
    );
  });

  it('reads nothing through __proto__: neither a key JSON.parse keeps nor an object of another prototype', () => {
    const parsedKey = JSON.parse(
      `{"resourceType":"Bundle","type":"collection","__proto__":${JSON.stringify({ entry: ReferralAuthorizationResponseBundleExample.entry })}}`,
    );
    expect(readPasAnswer(parsedKey)).toEqual({ kind: 'not_found' });
    const inherited = { __proto__: asParsed(ReferralAuthorizationResponseBundleExample) };
    expect(readPasAnswer(inherited)).toEqual({ kind: 'invalid', reason: 'the answer is not a FHIR resource' });
    const itemKey = asParsed(ReferralAuthorizationResponseBundleExample) as any;
    itemKey.entry[0].resource.item[0] = JSON.parse('{"__proto__":{"itemSequence":1}}');
    expect(readPasAnswer(itemKey)).toEqual({
      kind: 'invalid',
      reason: "an item's sequence is not a whole number from 1 to 10000",
    });
    expect(({} as Record<string, unknown>).itemSequence).toBeUndefined();
  });

  it('is invalid for items that are not a list of objects with sequences, each once', () => {
    const cases: [unknown, string][] = [
      [{ item: { itemSequence: 1 } }, "the ClaimResponse's items are not a list of at most 100 objects"],
      [{ item: [decidedItem(1, 'A1'), null] }, "the ClaimResponse's items are not a list of at most 100 objects"],
      [{ item: [decidedItem(1, 'A1'), 'A1'] }, "the ClaimResponse's items are not a list of at most 100 objects"],
      [
        { item: [{ ...decidedItem(1, 'A1'), itemSequence: '1' }] },
        "an item's sequence is not a whole number from 1 to 10000",
      ],
      [
        { item: [{ ...decidedItem(1, 'A1'), itemSequence: 0 }] },
        "an item's sequence is not a whole number from 1 to 10000",
      ],
      [
        { item: [{ ...decidedItem(1, 'A1'), itemSequence: 1.5 }] },
        "an item's sequence is not a whole number from 1 to 10000",
      ],
      [
        { item: [{ ...decidedItem(1, 'A1'), itemSequence: undefined }] },
        "an item's sequence is not a whole number from 1 to 10000",
      ],
      [{ item: [decidedItem(1, 'A1'), decidedItem(1, 'A3')] }, 'two items of the ClaimResponse have the same sequence'],
    ];
    for (const [fields, reason] of cases) {
      expect(readPasAnswer(asParsed(homecareAnswer([], fields as never)))).toEqual({ kind: 'invalid', reason });
    }
  });

  it('reads 100 items and refuses 101 (a cut list would misstate the aggregate)', () => {
    const items = (count: number) => Array.from({ length: count }, (_, index) => decidedItem(index + 1, 'A1'));
    const hundred = readPasAnswer(asParsed(homecareAnswer([], { item: items(100) })));
    expect(hundred.kind === 'decision' && hundred.decision.items).toHaveLength(100);
    expect(readPasAnswer(asParsed(homecareAnswer([], { item: items(101) })))).toEqual({
      kind: 'invalid',
      reason: "the ClaimResponse's items are not a list of at most 100 objects",
    });
  });

  it('refuses Bundles of more than 1000 entries and Parameters of more than 100 parameters', () => {
    const bundle = asParsed(ReferralAuthorizationResponseBundleExample);
    const filler = bundle.entry![1]!;
    bundle.entry = [...bundle.entry!, ...Array.from({ length: 1000 }, () => filler)];
    expect(readPasAnswer(bundle)).toEqual({
      kind: 'invalid',
      reason: 'a Bundle of the answer has more than 1000 entries',
    });
    const parameters = returned(
      ...Array.from({ length: 101 }, () => ({ resourceType: 'Bundle' as const, type: 'collection' as const })),
    );
    expect(readPasAnswer(asParsed(parameters))).toEqual({
      kind: 'invalid',
      reason: "the answer's Parameters has more than 100 parameters",
    });
  });

  it('passes over entries and parameters that hold no resource, and lists that are not lists', () => {
    const bundle = asParsed(ReferralAuthorizationResponseBundleExample) as any;
    bundle.entry.unshift(null, 'x', { fullUrl: 'urn:x' }, { resource: 'ClaimResponse' });
    expect(readPasAnswer(bundle)).toMatchObject({ kind: 'decision', decision: { status: 'approved' } });
    expect(readPasAnswer({ resourceType: 'Bundle', type: 'searchset', entry: 'none' })).toEqual({ kind: 'not_found' });
    expect(readPasAnswer({ resourceType: 'Parameters', parameter: { name: 'return' } })).toEqual({ kind: 'not_found' });
    const parameters = asParsed(PASClaimInquiryOperationResponseExample) as any;
    parameters.parameter.push({ name: 'return', resource: null }, { name: 'return', resource: 'Bundle' });
    expect(readPasAnswer(parameters)).toMatchObject({ kind: 'decision' });
  });

  it('keeps none of a huge or hostile text as it came', () => {
    const answer = readPasAnswer(
      asParsed(
        homecareAnswer(['A3'], {
          processNote: [
            { number: 1, text: 'N'.repeat(5_000_000) },
            { number: 2, text: `Denied\u202e${MARKER}` },
            { number: 3, text: `  <script>alert("${MARKER}")</script>  ` },
            { number: 4, text: '\u0000\u0001' },
            { number: 5, text: 12 as never },
            { number: 6, text: `${'😀'.repeat(499)}😀😀` },
          ],
        }),
      ),
    );
    if (answer.kind !== 'decision') throw new Error('expected a decision');
    expect(answer.decision.reasons.map((reason) => reason.text)).toEqual([
      `${'N'.repeat(499)}…`,
      `<script>alert("${MARKER}")</script>`,
      `${'😀'.repeat(499)}…`,
    ]);
  });

  it('is invalid, without the payer’s words, for a huge authorization number', () => {
    const answer = readPasAnswer(
      asParsed(homecareAnswer(['A1'], { preAuthRef: `${MARKER}${'9'.repeat(10_000_000)}` })),
    );
    expect(answer).toEqual({
      kind: 'invalid',
      reason: 'the authorization number (preAuthRef) is not 1 to 50 letters, digits or hyphens',
    });
  });

  it('reads fields of the wrong type as absent where they only inform', () => {
    const answer = readPasAnswer(
      asParsed(
        homecareAnswer(['A1'], {
          id: 12 as never,
          created: 20050502 as never,
          identifier: 'TRN' as never,
          processNote: { text: 'x' } as never,
          preAuthPeriod: '2005' as never,
          request: ['Claim/HomecareAuthorizationExample'] as never,
        }),
      ),
    );
    expect(answer).toMatchObject({
      kind: 'decision',
      decision: {
        status: 'approved',
        decisionDate: null,
        claimResponseId: null,
        claimIdentifier: '111099',
        reasons: [],
        items: [{ serviceCode: { code: 'G0154' } }],
      },
    });
  });
});
