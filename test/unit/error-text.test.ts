import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { MAX_ERROR_TEXTS, toErrorTexts, VALUE_IN_ERROR_MAX_CHARS } from '#lib/validation/error-text';

/** The texts of what ajv, configured as scripts/compile-schemas.ts does, finds wrong with `data`. */
const textsOf = (schema: object, data: unknown) => {
  const validate = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false }).compile(schema);
  return validate(data) ? [] : toErrorTexts(validate.errors);
};

const error = (overrides: Partial<ErrorObject>): ErrorObject =>
  ({
    instancePath: '',
    schemaPath: '#/x',
    keyword: 'type',
    params: {},
    message: 'must be string',
    ...overrides,
  }) as ErrorObject;

describe('toErrorTexts', () => {
  it('writes the root as / and keeps nested paths', () => {
    expect(toErrorTexts([error({ data: 1 }), error({ instancePath: '/a/0/b', data: 2 })])).toEqual([
      '/: Type error for value "1". Message: must be string.',
      '/a/0/b: Type error for value "2". Message: must be string.',
    ]);
  });

  it('includes null, booleans, numbers and short strings; not objects, arrays or long strings', () => {
    const texts = toErrorTexts([
      error({ data: null }),
      error({ data: false }),
      error({ data: 1.5 }),
      error({ data: 'x'.repeat(VALUE_IN_ERROR_MAX_CHARS) }),
      error({ data: 'x'.repeat(VALUE_IN_ERROR_MAX_CHARS + 1) }),
      error({ data: {} }),
      error({ data: [] }),
    ]);
    expect(texts).toEqual([
      '/: Type error for value "null". Message: must be string.',
      '/: Type error for value "false". Message: must be string.',
      '/: Type error for value "1.5". Message: must be string.',
      `/: Type error for value "${'x'.repeat(VALUE_IN_ERROR_MAX_CHARS)}". Message: must be string.`,
      '/: Type error. must be string.',
      '/: Type error. must be string.',
      '/: Type error. must be string.',
    ]);
  });

  it('never quotes the value of a writeOnly property', () => {
    const secret = (writeOnly: boolean) =>
      error({
        keyword: 'minLength',
        message: 'must NOT have fewer than 12 characters',
        data: 'hunter2',
        parentSchema: { type: 'string', writeOnly },
      });
    expect(toErrorTexts([secret(true), secret(false)])).toEqual([
      '/: MinLength error. must NOT have fewer than 12 characters.',
      '/: MinLength error for value "hunter2". Message: must NOT have fewer than 12 characters.',
    ]);
  });

  it('says the value is invalid when the validator gives no message', () => {
    expect(toErrorTexts([error({ keyword: 'format', message: undefined, data: 'x' })])).toEqual([
      '/: Format error for value "x". Message: is invalid.',
    ]);
  });

  it('capitalises the keyword into the errorType', () => {
    expect(
      toErrorTexts([error({ keyword: 'maxLength', message: 'must NOT have more than 2 characters', data: 'abc' })]),
    ).toEqual(['/: MaxLength error for value "abc". Message: must NOT have more than 2 characters.']);
  });

  it('groups required errors per object, in the order first seen', () => {
    const required = (path: string, name: string) =>
      error({
        keyword: 'required',
        instancePath: path,
        params: { missingProperty: name },
        message: `must have required property '${name}'`,
      });
    expect(toErrorTexts([required('', 'a'), required('/p', 'x'), required('', 'b')])).toEqual([
      "/: Required error. must have required properties 'a', 'b'.",
      "/p: Required error. must have required property 'x'.",
    ]);
  });

  it('returns nothing for no errors', () => {
    expect(toErrorTexts(null)).toEqual([]);
    expect(toErrorTexts([])).toEqual([]);
  });

  it(`shows at most ${MAX_ERROR_TEXTS} texts, then one text counting the errors left out`, () => {
    const types = (count: number) => Array.from({ length: count }, (_, i) => error({ instancePath: `/${i}`, data: i }));
    expect(toErrorTexts(types(MAX_ERROR_TEXTS))).toHaveLength(MAX_ERROR_TEXTS);
    const one = toErrorTexts(types(MAX_ERROR_TEXTS + 1));
    expect(one).toHaveLength(MAX_ERROR_TEXTS + 1);
    expect(one.at(-2)).toBe('/99: Type error for value "99". Message: must be string.');
    expect(one.at(-1)).toBe('/: MaxErrors error. 1 more error was left out.');
    expect(toErrorTexts(types(2345 + MAX_ERROR_TEXTS)).at(-1)).toBe(
      '/: MaxErrors error. 2345 more errors were left out.',
    );
  });

  it('counts errors the validator did not build, and each name a shown text could not list', () => {
    const required = (path: string, name: string) =>
      error({ keyword: 'required', instancePath: path, params: { missingProperty: name } });
    const shown = Array.from({ length: MAX_ERROR_TEXTS - 1 }, (_, i) => error({ instancePath: `/${i}`, data: i }));
    const texts = toErrorTexts(
      [...shown, required('/a', 'x'), required('/b', 'y'), required('/b', 'z'), required('/a', 'w')],
      7,
    );
    expect(texts).toHaveLength(MAX_ERROR_TEXTS + 1);
    expect(texts.at(-2)).toBe("/a: Required error. must have required properties 'x', 'w'.");
    expect(texts.at(-1)).toBe('/: MaxErrors error. 9 more errors were left out.');
    expect(toErrorTexts([], 3)).toEqual(['/: MaxErrors error. 3 more errors were left out.']);
  });

  it('folds the branches of many anyOf errors into them (a set of their paths, not a search per error)', () => {
    const errors: ErrorObject[] = [];
    for (let i = 0; i < 80_000; i++) {
      const schemaPath = `#/properties/p/items/anyOf`;
      errors.push(error({ keyword: 'required', instancePath: `/p/${i}`, schemaPath: `${schemaPath}/0/required` }));
      errors.push(
        error({ keyword: 'anyOf', instancePath: `/p/${i}`, schemaPath, message: 'must match a schema in anyOf' }),
      );
    }
    const texts = toErrorTexts(errors);
    expect(texts).toHaveLength(MAX_ERROR_TEXTS + 1);
    expect(texts[0]).toBe('/p/0: AnyOf error. must match a schema in anyOf.');
    expect(texts.at(-1)).toBe('/: MaxErrors error. 79900 more errors were left out.');
  });

  it('reads an anyOf or oneOf of required-only branches as "at least one of these names", without its branches', () => {
    const oneOfNames = (keyword: 'anyOf' | 'oneOf') => ({
      type: 'object',
      properties: { p: { type: 'object', [keyword]: [{ required: ['a'] }, { required: ['b', 'c'] }] } },
    });
    for (const keyword of ['anyOf', 'oneOf'] as const) {
      expect(textsOf(oneOfNames(keyword), { p: {} })).toEqual([
        "/p: Required error. must have at least one of the properties 'a', 'b', 'c'.",
      ]);
    }
  });

  it('says a oneOf matched more than one branch as the validator does, even of required-only branches', () => {
    const schema = { type: 'object', oneOf: [{ required: ['a'] }, { required: ['b'] }] };
    expect(textsOf(schema, { a: 1, b: 2 })).toEqual(['/: OneOf error. must match exactly one schema in oneOf.']);
  });

  it('reports any other anyOf or oneOf by its own text, without its branches', () => {
    const schemas = [
      { anyOf: [{ required: ['a'] }, { required: ['b'], properties: { b: { type: 'string' } } }] },
      { anyOf: [{ required: ['a'] }, { minProperties: 2 }] },
      { anyOf: [{ required: ['a'] }, false] },
      { oneOf: [{ properties: { a: { const: 1 } } }, { properties: { a: { const: 2 } } }] },
    ];
    expect(schemas.flatMap((schema) => textsOf({ type: 'object', ...schema }, { c: 3 }))).toEqual([
      '/: AnyOf error. must match a schema in anyOf.',
      '/: AnyOf error. must match a schema in anyOf.',
      '/: AnyOf error. must match a schema in anyOf.',
      '/: OneOf error. must match exactly one schema in oneOf.',
    ]);
    expect(textsOf({ type: 'object', ...schemas[0] }, { b: 1 })).toEqual([
      '/: AnyOf error. must match a schema in anyOf.',
    ]);
  });

  it('folds every branch into its combinator, the eleventh as the first', () => {
    const schema = { anyOf: Array.from({ length: 11 }, (_, i) => ({ const: i })) };
    expect(textsOf(schema, 99)).toEqual(['/: AnyOf error for value "99". Message: must match a schema in anyOf.']);
  });

  it('reads names into no other keyword, whatever its schema looks like', () => {
    expect(textsOf({ enum: [{ required: ['a'] }] }, {})).toEqual([
      '/: Enum error. must be equal to one of the allowed values.',
    ]);
  });

  it('keeps the errors under a keyword that is no combinator (propertyNames and its pattern)', () => {
    expect(textsOf({ type: 'object', propertyNames: { pattern: '^[a-z]+$' } }, { A1: 1 })).toEqual([
      '/: Pattern error for value "A1". Message: must match pattern "^[a-z]+$".',
      '/: PropertyNames error. property name must be valid.',
    ]);
  });
});
