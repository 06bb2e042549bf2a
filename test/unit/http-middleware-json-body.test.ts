import { beforeEach, describe, expect, it } from 'vitest';
import { endpoint, MAX_JSON_BODY_BYTES } from '#lib/http/endpoint';
import { multipartBody } from '#lib/http/multipart';
import { MultipartForm } from '#lib/http/multipart-form';
import { json } from '#lib/http/response';
import { MAX_JSON_DEPTH } from '#lib/json/safe-json';
import { apiGatewayEvent, invoke } from '#test/support/api-gateway-event';

/*
 * The JSON body middleware of endpoint() (hand-written, see docs/architecture.md "Body parsers"),
 * called through the wrapped handler with API Gateway events.
 */

let received: unknown[];
beforeEach(() => {
  received = [];
});
const echo = async (event: { body: unknown }) => {
  received.push(event.body);
  return json(200, event.body);
};
const plain = endpoint<unknown>(echo, { json: {} });
const mergePatch = endpoint<unknown>(echo, { json: { mediaTypes: ['application/merge-patch+json'] } });
const withForm = endpoint<unknown>(echo, {
  json: {},
  multipart: multipartBody({ maxBytes: 1_000, maxFileBytes: 100 }),
});
const absent = endpoint<unknown>(echo, { json: { absentBody: {} } });

const send = (handler: typeof plain, body: string | undefined, contentType?: string, base64 = false) =>
  invoke(handler, apiGatewayEvent({ ...(body === undefined ? {} : { body }), contentType, base64 }));

const expectRefused = (res: Awaited<ReturnType<typeof send>>, status: number) => {
  expect(res.status).toBe(status);
  expect(res.type).toMatch(/^application\/problem\+json/);
  expect(received).toEqual([]);
};

describe('JSON body middleware', () => {
  it('hands the handler the parsed body, from text or base64, whatever the Content-Type header’s case', async () => {
    const body = '{"a":[1,2.5,"x"],"b":{"c":null}}';
    expect((await send(plain, body, 'application/json; charset=utf-8')).status).toBe(200);
    expect((await send(plain, body, 'APPLICATION/JSON', true)).status).toBe(200);
    expect(received).toEqual([JSON.parse(body), JSON.parse(body)]);
  });

  it('keeps __proto__, constructor and prototype as ordinary own members (Middy’s parser refuses them)', async () => {
    const res = await send(plain, '{"__proto__":{"polluted":true},"constructor":{"prototype":{}}}', 'application/json');
    expect(res.status).toBe(200);
    const [body] = received as Array<Record<string, unknown>>;
    expect(Object.keys(body!)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('413 before parsing: a body over the limit is refused even when it is not JSON', async () => {
    const res = await send(plain, `{${'x'.repeat(MAX_JSON_BODY_BYTES)}`, 'application/json');
    expectRefused(res, 413);
    expect(res.body.limitBytes).toBe(MAX_JSON_BODY_BYTES);
  });

  it('415 listing the accepted types, merge patch and multipart alternatives included', async () => {
    for (const [handler, accepted] of [
      [plain, ['application/json']],
      [mergePatch, ['application/json', 'application/merge-patch+json']],
      [withForm, ['application/json', 'multipart/form-data']],
    ] as const) {
      for (const type of ['text/plain', 'application/problem+json', undefined]) {
        const res = await send(handler, '{}', type);
        expectRefused(res, 415);
        expect(res.body.accepted).toEqual(accepted);
      }
    }
    expect((await send(mergePatch, '{}', 'application/merge-patch+json')).status).toBe(200);
  });

  it('400 with the error position for malformed JSON, never echoing the text', async () => {
    const res = await send(plain, '{"lastName": "Sensitive-Name" oops', 'application/json');
    expectRefused(res, 400);
    expect(res.body.detail).toBe('The request body is not valid JSON (error at position 30).');
    expect(res.body.position).toBe(30);
    expect(JSON.stringify(res.body)).not.toContain('Sensitive');
  });

  it('400 from lib/json/safe-json.ts: too deep, or a number a double cannot hold', async () => {
    const deep = await send(
      plain,
      `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`,
      'application/json',
    );
    expectRefused(deep, 400);
    expect(deep.body).toMatchObject({ maxDepth: MAX_JSON_DEPTH, position: MAX_JSON_DEPTH });
    const inexact = await send(plain, '{"n":9007199254740993}', 'application/json');
    expectRefused(inexact, 400);
    expect(inexact.body.position).toBe(5);
  });

  it('an empty body: 400, or what absentBody stands for', async () => {
    expectRefused(await send(plain, '', 'application/json'), 400);
    expectRefused(await send(plain, undefined, 'application/json'), 400);
    expect((await send(absent, undefined)).status).toBe(200);
    expect(received).toEqual([{}]);
  });

  it('with multipart also accepted, the Content-Type picks the parser', async () => {
    expect((await send(withForm, '{"a":1}', 'application/json')).status).toBe(200);
    const form = Buffer.from('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--b--\r\n');
    const res = await invoke(withForm, apiGatewayEvent({ body: form, contentType: 'multipart/form-data; boundary=b' }));
    expect(res.status).toBe(200);
    expect(received[0]).toEqual({ a: 1 });
    expect(received[1]).toBeInstanceOf(MultipartForm);
  });
});
