import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { MAX_ERROR_TEXTS, toErrorTexts, VALUE_IN_ERROR_MAX_CHARS } from '#lib/validation/error-text';

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
});
