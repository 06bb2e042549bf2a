import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endpoint } from '#lib/http/endpoint';
import { multipartBody } from '#lib/http/multipart';
import { MultipartForm } from '#lib/http/multipart-form';
import { json } from '#lib/http/response';
import { apiGatewayEvent, invoke } from '#test/support/api-gateway-event';

/*
 * The multipart body middleware of endpoint(), called through the wrapped handler with API Gateway
 * events: @middy/http-multipart-body-parser reads the form, the limits are counted and checked
 * around it, and every refusal is a 4xx before the handler runs, never a partial form.
 */

const boundary = 'b0undary';
const contentType = `multipart/form-data; boundary=${boundary}`;
/** A form of parts (text as UTF-8, Buffers as they are). */
const form = (...parts: Array<string | Buffer>) =>
  Buffer.concat([
    ...parts.flatMap((part) => [Buffer.from(`--${boundary}\r\n`), Buffer.from(part), Buffer.from('\r\n')]),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
const file = (content: string | Buffer, { name = 'file', fileName = 'scan.pdf', type = 'application/pdf' } = {}) =>
  Buffer.concat([
    Buffer.from(
      `Content-Disposition: form-data; name="${name}"; filename="${fileName}"\r\nContent-Type: ${type}\r\n\r\n`,
    ),
    Buffer.from(content),
  ]);
const field = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;

const limits = { maxBytes: 40_000, maxFileBytes: 100, maxFiles: 2, maxFields: 3, maxFieldBytes: 20 };
let received: unknown[];
const handler = endpoint<MultipartForm>(
  async (event) => {
    received.push(event.body);
    return json(200, event.body);
  },
  { multipart: multipartBody(limits) },
);
const send = (body: Buffer, type = contentType) => invoke(handler, apiGatewayEvent({ body, contentType: type }));

// Middy's parser throws from stream events for some hostile forms; none of that may escape a request.
let escaped: unknown[];
const onEscape = (error: unknown) => escaped.push(error);
beforeEach(() => {
  received = [];
  escaped = [];
  process.on('uncaughtException', onEscape);
});
afterEach(() => {
  process.off('uncaughtException', onEscape);
  expect(escaped).toEqual([]);
});

const expectRefused = (res: Awaited<ReturnType<typeof send>>, status: number, detail: RegExp) => {
  expect(res.status).toBe(status);
  expect(res.type).toMatch(/^application\/problem\+json/);
  expect(res.body.detail).toMatch(detail);
  expect(received).toEqual([]);
};

describe('multipart body middleware (@middy/http-multipart-body-parser inside endpoint())', () => {
  it('hands the handler a MultipartForm from a base64 event: exact bytes, every field value in order', async () => {
    const bytes = Buffer.from('%PDF-1.7\r\n\u00ff\u0000 binary\r\n', 'latin1');
    const res = await send(form(field('tag', 'a'), file(bytes), field('__proto__', 'plain'), field('tag', 'été')));
    expect(res.status).toBe(200);
    const [body] = received as MultipartForm[];
    expect(body).toBeInstanceOf(MultipartForm);
    expect(body!.files).toHaveLength(1);
    expect(body!.files[0]).toMatchObject({ field: 'file', fileName: 'scan.pdf', mediaType: 'application/pdf' });
    expect(body!.files[0]!.bytes.equals(bytes)).toBe(true);
    expect([...body!.fields]).toEqual([
      ['tag', ['a', 'été']],
      ['__proto__', ['plain']],
    ]);
  });

  it('reads a file part without Content-Type as typeless, and `a[]` after `a` as its own field (Middy throws there)', async () => {
    await send(
      form(
        `Content-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-`,
        field('a', 'x'),
        field('a[]', 'y'),
      ),
    );
    const [body] = received as MultipartForm[];
    expect(body!.files[0]!.mediaType).toBeUndefined();
    expect([...body!.fields]).toEqual([
      ['a', ['x']],
      ['a[]', ['y']],
    ]);
  });

  it('413 before parsing for a body over maxBytes', async () => {
    const res = await send(Buffer.concat([form(file('x')), Buffer.alloc(limits.maxBytes, 0x20)]));
    expectRefused(res, 413, /exceeds the limit of 40000 bytes/);
    expect(res.body.limitBytes).toBe(limits.maxBytes);
  });

  it('415 listing the accepted type for anything but multipart/form-data', async () => {
    for (const type of ['application/json', 'text/plain', undefined]) {
      const res = await invoke(
        handler,
        apiGatewayEvent({ body: form(file('x')), ...(type ? { contentType: type } : {}) }),
      );
      expectRefused(res, 415, /^Content-Type must be one of: multipart\/form-data\.$/);
      expect(res.body.accepted).toEqual(['multipart/form-data']);
    }
  });

  it('a 4xx, never a partial form, for every limit exceeded', async () => {
    const cases: Array<[Buffer, number, RegExp]> = [
      [
        form(file(`${'0123456789'.repeat(10)}X`)),
        413,
        /^The file in form field "file" exceeds the limit of 100 bytes\.$/,
      ],
      [form(field('note', 'x'.repeat(21))), 400, /^Form field "note" exceeds 20 bytes\.$/],
      [form(file('a', { name: 'f1' }), file('b', { name: 'f2' }), file('c', { name: 'f3' })), 400, /^At most 2 file/],
      [form(field('a', '1'), field('b', '2'), field('c', '3'), field('d', '4')), 400, /^At most 3 form fields/],
      // Parts busboy ignores (not form-data) still count: beyond 5 parts nothing would be read.
      [
        form(...Array.from({ length: 5 }, () => 'Content-Disposition: attachment\r\n\r\nx'), field('a', '1')),
        400,
        /^At most 5 form parts/,
      ],
      [form(field('n'.repeat(101), 'x')), 400, /^A form field name exceeds 100 characters\.$/],
    ];
    for (const [body, status, detail] of cases) expectRefused(await send(body), status, detail);
    // At the limits exactly, everything is read.
    const full = await send(
      form(
        file('0123456789'.repeat(10), { name: 'f1' }),
        file('b', { name: 'f2' }),
        field('a', 'x'.repeat(20)),
        field('b', ''),
        field('n'.repeat(100), ''),
      ),
    );
    expect(full.status).toBe(200);
  });

  it('400 for forms Middy alone would crash on, hang on or read in part', async () => {
    const cases: Array<[string, Buffer, string?]> = [
      ['a part without a name (Middy throws reading its length)', form('Content-Disposition: form-data\r\n\r\nx')],
      ['a body cut short inside a file (busboy fails a stream nobody listens to)', form(file('abc')).subarray(0, -20)],
      ['a part whose header block never ends (busboy waits forever)', form('', field('a', 'x'))],
      [
        'a header block over 16 KiB (busboy reads it cut short)',
        form(field('a', 'x').replace('\r\n\r\n', `\r\nX-Pad: ${'p'.repeat(16_400)}\r\n\r\n`)),
      ],
      ['no delimiter at all', Buffer.from('just text')],
      ['no boundary parameter', form(field('a', 'x')), 'multipart/form-data'],
    ];
    for (const [name, body, type] of cases) {
      const res = await send(body, type);
      expect(res.status, name).toBe(400);
      expect(res.type, name).toMatch(/^application\/problem\+json/);
      expect(received, name).toEqual([]);
    }
  });

  it('accepts a quoted boundary and any case of the parameter name, which Middy’s own check would refuse', async () => {
    const res = await send(form(field('a', 'x')), `multipart/form-data; BOUNDARY="${boundary}"; charset=utf-8`);
    expect(res.status).toBe(200);
    const refused = await send(form(field('a', 'x')), `multipart/form-data; boundary="${'x'.repeat(71)}"`);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/boundary must be 1 to 70 characters/);
  });
});
