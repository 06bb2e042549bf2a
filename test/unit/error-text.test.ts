import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { toErrorTexts, VALUE_IN_ERROR_MAX_CHARS } from '#lib/validation/error-text';

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
});
