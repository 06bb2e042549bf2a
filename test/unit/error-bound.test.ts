import { Ajv, type ErrorObject } from 'ajv';
import * as standalone from 'ajv/dist/standalone/index.js';
import { describe, expect, it } from 'vitest';
import { boundErrorCollection, isInsideBranch } from '#lib/validation/error-bound';
import { closingText, toErrorTexts } from '#lib/validation/error-text';
import formats from '#lib/validation/formats';
import * as compiled from '#lib/validation/generated/validators';
import { MAX_COLLECTED_ERRORS } from '#lib/validation/runtime';
import { schemaSources } from '#lib/validation/schema-sources';
import { validate } from '#lib/validation/validate';
import { minimalRequest } from '#test/support/fixtures';

type Validator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null; uncollectedErrors?: number };

/** ajv as scripts/compile-schemas.ts configures it, without the bound. */
const newAjv = () => {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, strictRequired: false, code: { source: true } });
  for (const [name, check] of Object.entries(formats)) ajv.addFormat(name, check);
  return ajv;
};

/** A small schema's standalone validator, rewritten to collect at most `max` errors. */
const bounded = (schema: object, max: number): Validator => {
  const ajv = newAjv();
  const code = boundErrorCollection(standalone.default.default(ajv, ajv.compile(schema)), String(max));
  const module = { exports: {} as Validator };
  new Function('module', code)(module);
  return module.exports;
};

const textsOf = (validator: Validator, data: unknown) =>
  validator(data) ? [] : toErrorTexts(validator.errors, validator.uncollectedErrors);

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    a: { type: 'object', anyOf: [{ required: ['x'] }, { required: ['y'] }] },
    list: { type: 'array', items: { type: 'string' } },
  },
};

describe('boundErrorCollection', () => {
  it('keeps the verdict and the texts when the errors stay under the bound', () => {
    const validator = bounded(schema, 100);
    expect(validator({ a: { x: 1 }, list: ['s'] })).toBe(true);
    expect(textsOf(validator, { z: 1, a: {}, list: [1] })).toEqual([
      "/: AdditionalProperties error. must NOT have additional property 'z'.",
      "/a: Required error. must have at least one of the properties 'x', 'y'.",
      '/list/0: Type error for value "1". Message: must be string.',
    ]);
  });

  it('past the bound, builds no more error objects but counts them, still invalid', () => {
    const validator = bounded(schema, 3);
    expect(validator({ list: [1, 2, 3, 4, 5, 6, 7] })).toBe(false);
    expect(validator.errors).toHaveLength(3);
    expect(validator.uncollectedErrors).toBe(4);
    expect(toErrorTexts(validator.errors, validator.uncollectedErrors)).toEqual([
      '/list/0: Type error for value "1". Message: must be string.',
      '/list/1: Type error for value "2". Message: must be string.',
      '/list/2: Type error for value "3". Message: must be string.',
      '/: MaxErrors error. 4 more errors were left out.',
    ]);
  });

  it('does not count the errors of anyOf branches, only the anyOf', () => {
    const validator = bounded(schema, 1);
    expect(textsOf(validator, { z: 1, a: {} })).toEqual([
      "/: AdditionalProperties error. must NOT have additional property 'z'.",
      '/: MaxErrors error. 1 more error was left out.',
    ]);
  });

  it('keeps an anyOf error whose branch errors were kept, so the branches never show as texts', () => {
    const validator = bounded(schema, 2);
    expect(validator({ z: 1, a: {} })).toBe(false);
    expect(validator.errors?.map((e) => e.keyword)).toEqual(['additionalProperties', 'required', 'anyOf']);
    expect(toErrorTexts(validator.errors, validator.uncollectedErrors)).toEqual([
      "/: AdditionalProperties error. must NOT have additional property 'z'.",
      "/a: Required error. must have at least one of the properties 'x', 'y'.",
    ]);
  });

  it('an anyOf that passes past the bound leaves the collected errors as they were', () => {
    const validator = bounded(schema, 1);
    expect(validator({ z: 1, w: 1, a: { y: 1 } })).toBe(false);
    expect(validator.errors).toHaveLength(1);
    expect(validator.uncollectedErrors).toBe(1);
    expect(toErrorTexts(validator.errors, validator.uncollectedErrors)).toEqual([
      "/: AdditionalProperties error. must NOT have additional property 'z'.",
      '/: MaxErrors error. 1 more error was left out.',
    ]);
    expect(validator({ a: { y: 1 } })).toBe(true);
  });

  it('refuses code that is not ajv standalone code', () => {
    expect(() => boundErrorCollection('"use strict";', '1')).toThrow(/Unexpected ajv standalone code/);
  });

  it('tells branch paths from property names', () => {
    expect(isInsideBranch('#/properties/p/anyOf/0/required')).toBe(true);
    expect(isInsideBranch('#/properties/p/anyOf')).toBe(false);
    expect(isInsideBranch('#/properties/anyOf/type')).toBe(false);
    expect(isInsideBranch('#/properties/anyOf/properties/not/not/type')).toBe(true);
  });
});

describe('the compiled Request validator, bounded, against ajv unbounded', () => {
  const unbounded = newAjv().compile(schemaSources.Request) as Validator;
  const reference = (data: unknown) => (unbounded(data) ? [] : toErrorTexts(unbounded.errors));

  const bodies: [string, unknown][] = [
    ['8,000 empty providers', { ...minimalRequest('x'), renderingProviders: Array.from({ length: 8000 }, () => ({})) }],
    [
      'providers missing names after unknown members',
      {
        ...minimalRequest('x'),
        a: 1,
        b: 2,
        renderingProviders: Array.from({ length: 3000 }, () => ({ roleCode: 'ZZ', npi: 'x' })),
      },
    ],
    ['numbers for notes', { ...minimalRequest('x'), providerNotes: Array.from({ length: 5000 }, () => 1) }],
    ['a few errors', { ...minimalRequest('x'), serviceTypeCode: 'ZZ', patient: {} }],
  ];

  it.each(bodies)('%s: the same texts and the same count of errors left out', (_name, body) => {
    expect(validate('Request', body).errors).toEqual(reference(body));
  });

  it('builds at most MAX_COLLECTED_ERRORS error objects and counts the others', () => {
    const request = (compiled as unknown as Record<string, Validator>).Request!;
    const body = { ...minimalRequest('x'), renderingProviders: Array.from({ length: 80_000 }, () => ({})) };
    expect(request(body)).toBe(false);
    expect(request.errors!.length).toBeLessThanOrEqual(MAX_COLLECTED_ERRORS + 1);
    expect(request.uncollectedErrors).toBeGreaterThan(150_000);
    expect(validate('Request', body).errors.at(-1)).toBe(closingText(159_901));
  });
});
