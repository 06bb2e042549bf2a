import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '#lib/json/safe-json';
import { closingText, MAX_ERROR_TEXTS } from '#lib/validation/error-text';
import { call, newTenant, uniqueId } from '#test/support/api';
import { minimalRequest, validRequest } from '#test/support/fixtures';

/** Bodies built to cost the server time, memory or integrity: each gets a small, clear 4xx. */
const v1 = '/api/external/v1/Requests';
const v11 = '/api/external/v1.1/Requests';
const validatePath = '/api/external/v1.1/Schemas/Request/validate';
const json = { 'content-type': 'application/json' };

let apiKey: string;
beforeAll(async () => {
  ({ apiKey } = await newTenant('hostile'));
});

const post = (rawBody: string) => call('POST', v11, { apiKey, rawBody, headers: json });
const get = (id: string) => call('GET', `${v11}/${id}`, { apiKey });
/** A request's JSON text with `members` (raw JSON text) added at the end. */
const requestWith = (id: string, members: string) => `${JSON.stringify(validRequest(id)).slice(0, -1)},${members}}`;
/** A request's JSON text whose procedures are `procedures` (raw JSON text). */
const withProcedures = (id: string, procedures: string) =>
  JSON.stringify({ ...validRequest(id), procedures: 'here' }).replace('"here"', procedures);

const expectProblem = (res: { status: number; headers: Headers; body: any }, detail: RegExp) => {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'about:blank', status: 400 });
  expect(res.body.detail).toMatch(detail);
};

describe('bodies full of validation errors get at most 101 texts', () => {
  const emptyProviders = (count: number) =>
    JSON.stringify({
      ...minimalRequest(uniqueId('many')),
      renderingProviders: Array.from({ length: count }, () => ({})),
    });

  // Each empty provider lacks its roleCode and one of npi/lastName/organizationName: 2 texts, plus maxItems.
  for (const [count, leftOut] of [
    [8_000, 2 * 8_000 + 1 - MAX_ERROR_TEXTS],
    [80_000, 2 * 80_000 + 1 - MAX_ERROR_TEXTS],
  ] as const) {
    it(`${count} empty providers: ${MAX_ERROR_TEXTS} texts and one saying ${leftOut} more were left out`, async () => {
      const body = emptyProviders(count);
      const validated = await call('POST', validatePath, { apiKey, rawBody: body, headers: json });
      const posted = await post(body);
      expect(validated.status).toBe(200);
      expect(posted.status).toBe(400);
      for (const res of [validated, posted]) {
        expect(res.body.succeeded).toBe(false);
        expect(res.body.errors).toHaveLength(MAX_ERROR_TEXTS + 1);
        expect(res.body.errors.slice(0, 3)).toEqual([
          '/renderingProviders: MaxItems error. must NOT have more than 20 items.',
          "/renderingProviders/0: Required error. must have at least one of the properties 'npi', 'lastName', 'organizationName'.",
          "/renderingProviders/0: Required error. must have required property 'roleCode'.",
        ]);
        expect(res.body.errors.at(-1)).toBe(closingText(leftOut));
        expect(res.body.errors.at(-1)).toBe(`/: MaxErrors error. ${leftOut} more errors were left out.`);
        expect(res.text.length).toBeLessThan(20_000);
      }
    });
  }
});

describe('__proto__, constructor and prototype are ordinary members', () => {
  it('a merge patch with __proto__ is refused by the schema and changes nothing', async () => {
    const id = uniqueId('proto');
    expect((await call('POST', v11, { apiKey, body: validRequest(id) })).status).toBe(201);
    const before = await get(id);
    const res = await call('PATCH', `${v1}/${id}`, {
      apiKey,
      rawBody: `{"admissionTypeCode":null,"patient":null,"__proto__":${JSON.stringify({
        admissionTypeCode: '1',
        patient: validRequest(id).patient,
      })}}`,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      succeeded: false,
      errors: [
        "/: Required error. must have required properties 'patient', 'admissionTypeCode'.",
        "/: AdditionalProperties error. must NOT have additional property '__proto__'.",
      ],
      type: 'none',
    });
    expect((await get(id)).body).toEqual(before.body);
  });

  it('a merge patch with constructor or prototype is refused as unknown members', async () => {
    const id = uniqueId('proto');
    expect((await call('POST', v11, { apiKey, body: validRequest(id) })).status).toBe(201);
    const res = await call('PATCH', `${v1}/${id}`, {
      apiKey,
      rawBody: '{"constructor":{"name":"x"},"prototype":{}}',
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      "/: AdditionalProperties error. must NOT have additional properties 'constructor', 'prototype'.",
    ]);
    expect((await get(id)).body.version).toBe(1);
  });

  it('POST with __proto__ is refused; inside procedures (not validated) it is stored and read back as sent', async () => {
    const refused = await post(requestWith(uniqueId('proto'), '"__proto__":{"quantity":1}'));
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      "/: AdditionalProperties error. must NOT have additional property '__proto__'.",
    ]);

    const id = uniqueId('proto');
    const procedures = '[{"__proto__":{"code":"72148"},"constructor":1}]';
    const created = await post(withProcedures(id, procedures));
    expect(created.status).toBe(201);
    const read = await get(id);
    expect(read.text).toContain(`"procedures":${procedures}`);
    // Merge-patching beside it keeps it.
    const patched = await call('PATCH', `${v1}/${id}`, { apiKey, body: { quantity: 2 } });
    expect(patched.status).toBe(200);
    expect(patched.text).toContain(`"procedures":${procedures}`);
  });
});

describe(`JSON bodies nest at most ${MAX_JSON_DEPTH} levels`, () => {
  /** procedures nested so that the whole body is `depth` levels deep. */
  const nestedProcedures = (id: string, depth: number) =>
    withProcedures(id, `${'['.repeat(depth - 1)}"x"${']'.repeat(depth - 1)}`);

  it(`a request ${MAX_JSON_DEPTH} levels deep is stored and read back`, async () => {
    const id = uniqueId('deep');
    const res = await post(nestedProcedures(id, MAX_JSON_DEPTH));
    expect(res.status).toBe(201);
    expect((await get(id)).text).toContain(`"procedures":${'['.repeat(MAX_JSON_DEPTH - 1)}"x"`);
  });

  it(`one level more, or 8,000 levels, is a 400 on every JSON endpoint (validate included), never a 500`, async () => {
    const existing = uniqueId('deep');
    expect((await call('POST', v11, { apiKey, body: validRequest(existing) })).status).toBe(201);
    for (const depth of [MAX_JSON_DEPTH + 1, 8_000]) {
      for (const [method, path] of [
        ['POST', v11],
        ['PUT', `${v11}/${existing}`],
        ['PUT', `${v1}/${existing}`],
        ['PATCH', `${v1}/${existing}`],
        ['POST', validatePath],
      ] as const) {
        const res = await call(method, path, { apiKey, rawBody: nestedProcedures(existing, depth), headers: json });
        expectProblem(
          res,
          new RegExp(`^The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`),
        );
        expect(res.body.maxDepth).toBe(MAX_JSON_DEPTH);
        expect(typeof res.body.position).toBe('number');
      }
    }
    expect((await get(existing)).body.version).toBe(1);
  });
});

describe('numbers are stored and read back with the value sent, or refused', () => {
  it('numbers a double holds are acknowledged, stored and read back with the same values', async () => {
    const id = uniqueId('num');
    const numbers = '[9007199254740991,-9007199254740991,0.1,1e22,1.5e-10,123.4500,-0,1.7976931348623157e308]';
    const created = await post(withProcedures(id, numbers));
    expect(created.status).toBe(201);
    const read = await get(id);
    expect(read.text).toContain('"procedures":[9007199254740991,-9007199254740991,0.1,1e+22,1.5e-10,123.45,0,');
    // -0 is the number 0: it reads back as 0, as JSON.stringify writes it.
    expect(read.body.procedures).toEqual(JSON.parse(numbers.replace('-0,', '0,')));
    expect(created.body.procedures).toEqual(read.body.procedures);
  });

  for (const number of ['1e400', '-1e400', '1e-400', '12345678901234567890123456789012345678901', '9007199254740993']) {
    it(`${number} is refused with a 400 on POST, PUT and PATCH, and nothing is stored`, async () => {
      const id = uniqueId('num');
      const body = withProcedures(id, `[1,${number}]`);
      const position = body.indexOf(`[1,${number}]`) + 3;
      const res = await post(body);
      expectProblem(res, /^The request body has a number that cannot be stored exactly as sent \(at position \d+\)/);
      expect(res.body.position).toBe(position);
      expect(res.text).not.toContain(number);
      expect((await get(id)).status).toBe(404);

      expect((await call('POST', v11, { apiKey, body: validRequest(id) })).status).toBe(201);
      expect((await call('PUT', `${v11}/${id}`, { apiKey, rawBody: body, headers: json })).status).toBe(400);
      const patch = `{"procedures":[${number}]}`;
      expect((await call('PATCH', `${v1}/${id}`, { apiKey, rawBody: patch, headers: json })).status).toBe(400);
      expect((await get(id)).body.procedures).toEqual(validRequest(id).procedures);
    });
  }
});
