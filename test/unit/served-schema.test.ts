import { describe, expect, it } from 'vitest';
import { isValidNpi } from '#lib/validation/formats';
import { toServedSchema } from '#lib/validation/served-schema';

describe('toServedSchema', () => {
  it('turns items: S into [S] and items: {anyOf: [A, B]} into [A, B], recursively', () => {
    const a = { type: 'string' };
    const b = { type: 'number' };
    expect(
      toServedSchema({
        type: 'object',
        properties: {
          one: { type: 'array', items: a },
          two: { type: 'array', items: { anyOf: [a, b] } },
          nested: { type: 'array', items: { type: 'object', properties: { inner: { type: 'array', items: b } } } },
        },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        one: { type: 'array', items: [a] },
        two: { type: 'array', items: [a, b] },
        nested: { type: 'array', items: [{ type: 'object', properties: { inner: { type: 'array', items: [b] } } }] },
      },
    });
  });

  it('leaves a property that happens to be named items alone', () => {
    const schema = { type: 'object', properties: { items: { type: 'string' } } };
    expect(toServedSchema(schema)).toEqual(schema);
  });
});

describe('isValidNpi', () => {
  it('accepts NPIs with a valid Luhn check digit (prefix 80840)', () => {
    for (const npi of ['1234567893', '1245319599', '1003000126']) expect(isValidNpi(npi), npi).toBe(true);
  });

  it('refuses a wrong check digit or a wrong shape', () => {
    for (const npi of ['1234567890', '123456789', '12345678931', 'abcdefghij', ''])
      expect(isValidNpi(npi), npi).toBe(false);
  });
});
