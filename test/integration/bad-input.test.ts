import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_BODY_BYTES } from '#lib/http/endpoint';
import { GATEWAY_LIMITS } from '#lib/http/gateway-responses';
import { call, newTenant, uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';

const v1 = '/api/external/v1/Requests';
const v11 = '/api/external/v1.1/Requests';

let apiKey: string;
let existing: string;
beforeAll(async () => {
  ({ apiKey } = await newTenant('bad-input'));
  existing = uniqueId('req');
  expect((await call('POST', v11, { apiKey, body: validRequest(existing) })).status).toBe(201);
});

/** Every JSON-taking endpoint, addressed at an existing request where it needs one. */
const jsonEndpoints = () =>
  [
    ['POST', v11],
    ['PUT', `${v11}/${existing}`],
    ['PUT', `${v1}/${existing}`],
    ['PATCH', `${v1}/${existing}`],
    ['POST', '/api/external/v1.1/Schemas/Request/validate'],
  ] as const;

const expectProblem = (res: { status: number; headers: Headers; body: any }, status: number) => {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'about:blank', status });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
};

describe('bad input gets a clear 4xx, never a 500, and changes nothing', () => {
  it('malformed JSON → 400 with the error position', async () => {
    for (const [method, path] of jsonEndpoints()) {
      const res = await call(method, path, {
        apiKey,
        rawBody: '{"externalId": "x",',
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(res, 400);
      expect(res.body.detail, `${method} ${path}`).toMatch(/^The request body is not valid JSON/);
    }
  });

  it('does not echo the malformed body back', async () => {
    const res = await call('POST', v11, {
      apiKey,
      rawBody: '{"patient": {"lastName": "Sensitive-Name"} oops',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('Sensitive-Name');
  });

  it('an empty body → 400', async () => {
    for (const [method, path] of jsonEndpoints()) {
      const res = await call(method, path, { apiKey, rawBody: '', headers: { 'content-type': 'application/json' } });
      expectProblem(res, 400);
    }
  });

  it('JSON that is not an object → 400 validation result at the root', async () => {
    // The attachment declaration too: the endpoint also takes multipart, and its JSON has a schema.
    for (const path of [v11, `${v11}/${existing}/Attachments`]) {
      for (const [raw, text] of [
        ['[]', '/: Type error. must be object.'],
        ['"text"', '/: Type error for value "text". Message: must be object.'],
        ['42', '/: Type error for value "42". Message: must be object.'],
        ['null', '/: Type error for value "null". Message: must be object.'],
      ]) {
        const res = await call('POST', path, { apiKey, rawBody: raw, headers: { 'content-type': 'application/json' } });
        expect(res.status, `${path} ${raw}`).toBe(400);
        expect(res.body).toEqual({ succeeded: false, errors: [text], type: 'none' });
      }
    }
  });

  it('a wrong or missing content type → 415', async () => {
    const body = JSON.stringify(validRequest(uniqueId('ct')));
    for (const contentType of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
      const res = await call('POST', v11, { apiKey, rawBody: body, headers: { 'content-type': contentType } });
      expectProblem(res, 415);
      expect(res.body.accepted).toEqual(['application/json']);
    }
    const noType = await fetch(`${(await import('#test/support/api')).baseUrl}${v11}`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey },
      body: new Uint8Array(Buffer.from(body)),
    });
    expect(noType.status).toBe(415);
  });

  it('merge-patch+json is accepted only where a merge patch is', async () => {
    const res = await call('PUT', `${v11}/${existing}`, {
      apiKey,
      body: validRequest(existing),
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expectProblem(res, 415);
  });

  it(`a body over ${MAX_JSON_BODY_BYTES} bytes → 413 from the endpoint`, async () => {
    const big = { ...validRequest(uniqueId('big')), providerNotes: ['x'.repeat(MAX_JSON_BODY_BYTES)] };
    for (const [method, path] of jsonEndpoints()) {
      const res = await call(method, path, { apiKey, body: big });
      expectProblem(res, 413);
      expect(res.body.limitBytes).toBe(MAX_JSON_BODY_BYTES);
    }
  });

  it(`a body over the gateway's ${GATEWAY_LIMITS.maxPayloadBytes} bytes → 413 from the gateway`, async () => {
    const res = await call('POST', v11, {
      apiKey,
      rawBody: 'x'.repeat(GATEWAY_LIMITS.maxPayloadBytes + 1),
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(res, 413);
  });

  it('over-long and malformed ids → 400 naming the parameter', async () => {
    const tooLong = 'a'.repeat(65);
    for (const [method, path, body, parameter] of [
      ['GET', `${v11}/${tooLong}`, undefined, 'externalId'],
      ['PUT', `${v11}/${tooLong}`, validRequest(tooLong), 'externalId'],
      ['PUT', `${v1}/${tooLong}`, validRequest(tooLong), 'appointmentId'],
      ['PATCH', `${v1}/${tooLong}`, { quantity: 1 }, 'appointmentId'],
      ['GET', `${v11}/${encodeURIComponent('bad#id')}`, undefined, 'externalId'],
      ['GET', `${v11}/${encodeURIComponent('-leading')}`, undefined, 'externalId'],
    ] as const) {
      const res = await call(method, path, { apiKey, ...(body ? { body: { ...body, externalId: undefined } } : {}) });
      expectProblem(res, 400);
      expect(res.body.parameter, `${method} ${path}`).toBe(parameter);
    }
  });

  it('an over-long externalId in a POST body → 400 validation result', async () => {
    const res = await call('POST', v11, { apiKey, body: validRequest('a'.repeat(65)) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      '/externalId: MaxLength error for value "' +
        'a'.repeat(65) +
        '". Message: must NOT have more than 64 characters.',
    ]);
  });

  it('an unknown id → 404; an unknown path or method → 404', async () => {
    expectProblem(await call('GET', `${v11}/${uniqueId('nope')}`, { apiKey }), 404);
    expectProblem(await call('GET', '/api/external/v1.1/Nothing', { apiKey }), 404);
    expectProblem(await call('DELETE', `${v11}/${existing}`, { apiKey }), 404);
    expectProblem(await call('GET', '/api/external/v2/Requests', { apiKey }), 404);
  });

  it('none of the above changed the existing request', async () => {
    const res = await call('GET', `${v11}/${existing}`, { apiKey });
    expect(res.body).toMatchObject({ ...validRequest(existing), version: 1 });
  });
});
