import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { enteredValuesFromStored } from '#lib/entities/rpa';
import { checkPortalAuthorization, enteredValuesOf } from '#lib/portal/portal-answers';

/** Strings a hostile or broken portal could show where a number or a date belongs. */
const HOSTILE = [
  '',
  ' ',
  'A'.repeat(51),
  'A'.repeat(1000),
  '<script>alert(1)</script>',
  '<b>SBX-1</b>',
  'SBX-1\nSBX-2',
  'SBX-1\r\n',
  ' SBX-1',
  'SBX 1',
  'SBX_1',
  'SBX.1',
  'ÄBC-1',
  'SBX-１',
  '$' + '{jndi:ldap://x}',
  "'; DROP TABLE x; --",
  '\u0000',
  '\u202eSBX',
];

const REFUSED = {
  status: "the portal's authorization status is not one of approved, partially approved, denied, pended, not found",
  number: "the portal's authorization number is not 1 to 50 letters, digits or hyphens",
  decisionDate: "the portal's decision date is not a date of the form YYYY-MM-DD",
};

describe('checkPortalAuthorization', () => {
  it('keeps an answer whose status, number and date are in form', () => {
    expect(
      checkPortalAuthorization({ status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' }),
    ).toEqual({ record: { status: 'approved', number: 'SBX-AUTH-000101', decisionDate: '2026-02-20' } });
    expect(checkPortalAuthorization({ status: 'denied', decisionDate: '2024-02-29' })).toEqual({
      record: { status: 'denied', number: null, decisionDate: '2024-02-29' },
    });
    expect(
      checkPortalAuthorization({ status: 'partially_approved', number: 'SBX-2', decisionDate: '2026-03-10' }),
    ).toEqual({
      record: { status: 'partially_approved', number: 'SBX-2', decisionDate: '2026-03-10' },
    });
    expect(checkPortalAuthorization({ status: 'pended' })).toEqual({
      record: { status: 'pended', number: null, decisionDate: null },
    });
    expect(checkPortalAuthorization({ status: 'approved', number: 'A'.repeat(50) })).toEqual({
      record: { status: 'approved', number: 'A'.repeat(50), decisionDate: null },
    });
  });

  it('keeps nothing but the status of not_found, whatever else the portal said', () => {
    expect(checkPortalAuthorization({ status: 'not_found', number: '<b>x</b>', decisionDate: 'never' })).toEqual({
      record: { status: 'not_found', number: null, decisionDate: null },
    });
  });

  it.each(HOSTILE)('refuses the number %#, naming the field in our words', (number) => {
    const checked = checkPortalAuthorization({ status: 'approved', number, decisionDate: '2026-02-20' });
    expect(checked).toEqual({ refused: REFUSED.number });
  });

  it.each([
    ...HOSTILE,
    '2026-02-30',
    '2026-13-01',
    '2025-02-29',
    '2026-2-3',
    '20260220',
    '2026-02-20T00:00:00Z',
    '2026-02-20\n',
    '02/20/2026',
    '+02026-02-20',
  ])('refuses the decision date %#', (decisionDate) => {
    expect(checkPortalAuthorization({ status: 'denied', decisionDate })).toEqual({ refused: REFUSED.decisionDate });
  });

  it.each([...HOSTILE, 'Approved', 'pending', 'APPROVED', 'approved ', 'partially approved', undefined, null, 7])(
    'refuses the status %#',
    (status) => {
      expect(checkPortalAuthorization({ status, number: 'A-1' })).toEqual({ refused: REFUSED.status });
    },
  );

  it('refuses what is not an answer at all, and numbers or dates that are not strings', () => {
    for (const answer of [undefined, null, 'approved', 42, []]) {
      expect(checkPortalAuthorization(answer)).toHaveProperty('refused');
    }
    expect(checkPortalAuthorization({ status: 'approved', number: 101 })).toHaveProperty('refused');
    expect(checkPortalAuthorization({ status: 'approved', decisionDate: new Date() })).toHaveProperty('refused');
  });

  it('stores only strings that match the patterns, and names the field otherwise (any string)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('approved', 'partially_approved', 'denied', 'pended'),
        fc.option(fc.string({ unit: 'binary', maxLength: 1200 }), { nil: undefined }),
        fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: undefined }),
        (status, number, decisionDate) => {
          const checked = checkPortalAuthorization({ status, number, decisionDate });
          if ('record' in checked) {
            const { record } = checked;
            expect(record.number === null || /^[A-Za-z0-9-]{1,50}$/.test(record.number)).toBe(true);
            expect(record.decisionDate === null || /^\d{4}-\d{2}-\d{2}$/.test(record.decisionDate)).toBe(true);
            expect(record.number).toBe(number ?? null);
            expect(record.decisionDate).toBe(decisionDate ?? null);
          } else {
            // The refusal is one of our fixed texts: nothing of what the portal showed is in it.
            expect([REFUSED.number, REFUSED.decisionDate]).toContain(checked.refused);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('accepts every real calendar day, and only those', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1900-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }),
        (date) => {
          const day = date.toISOString().slice(0, 10);
          expect(checkPortalAuthorization({ status: 'denied', decisionDate: day })).toHaveProperty('record');
        },
      ),
    );
  });
});

describe('enteredValuesOf', () => {
  it("records what was typed and, per field, whether the page held exactly that; never the page's text", () => {
    const entered = enteredValuesOf({
      typed: { reference: 'R-1', 'patient.lastName': 'Example', fromDate: '2026-03-02' },
      held: { reference: 'R-1', 'patient.lastName': 'Exam', extra: '<img src=x onerror=alert(1)>' },
    });
    expect(entered).toStrictEqual({
      reference: { value: 'R-1', readBack: true },
      'patient.lastName': { value: 'Example', readBack: false },
      fromDate: { value: '2026-03-02', readBack: false },
    });
    expect(JSON.stringify(entered)).not.toContain('Exam"');
    expect(JSON.stringify(entered)).not.toContain('onerror');
  });

  it('keeps the form order, at most 200 fields, names of at most 100 and values of at most 1000 characters', () => {
    const typed = Object.fromEntries(
      Array.from({ length: 250 }, (_, i) => [`f${i}`.padEnd(150, 'x'), 'v'.repeat(1500)]),
    );
    const entered = enteredValuesOf({ typed, held: typed });
    const fields = Object.keys(entered);
    expect(fields).toHaveLength(200);
    expect(fields[0]).toBe(Object.keys(typed)[0]!.slice(0, 100));
    expect(Object.values(entered).every((field) => field.value.length === 1000 && field.readBack)).toBe(true);
  });

  it('never takes a property of the prototype for what the page held', () => {
    const entered = enteredValuesOf({ typed: { constructor: 'x', toString: 'y' }, held: {} });
    expect(Object.entries(entered)).toEqual([
      ['constructor', { value: 'x', readBack: false }],
      ['toString', { value: 'y', readBack: false }],
    ]);
  });
});

describe('enteredValuesFromStored', () => {
  it('reads the current shape as it is, and older runs ({field: string}) as not checked', () => {
    expect(
      enteredValuesFromStored({
        a: { value: '1', readBack: true },
        b: { value: '2', readBack: false },
        c: '3',
        d: { value: '4', readBack: null },
      }),
    ).toStrictEqual({
      a: { value: '1', readBack: true },
      b: { value: '2', readBack: false },
      c: { value: '3', readBack: null },
      d: { value: '4', readBack: null },
    });
  });

  it('leaves out what is neither, and reads anything but an object as nothing', () => {
    expect(
      enteredValuesFromStored({ a: 7, b: { value: 1, readBack: true }, c: { value: 'x' }, d: null, e: ['x'] }),
    ).toStrictEqual({});
    for (const stored of [null, 'x', 7, ['a']]) expect(enteredValuesFromStored(stored)).toStrictEqual({});
  });

  it('keeps a field named __proto__ as a field, not a prototype', () => {
    const read = enteredValuesFromStored(JSON.parse('{"__proto__":"x"}'));
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(Object.entries(read)).toEqual([['__proto__', { value: 'x', readBack: null }]]);
  });
});
