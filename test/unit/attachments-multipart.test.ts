import { describe, expect, it } from 'vitest';
import { MultipartForm } from '#lib/http/multipart-form';
import { parseMultipart } from '#lib/http/multipart-parse';
import { HttpProblem } from '#lib/http/problem';

const boundary = 'XyZ';
const contentType = `multipart/form-data; boundary=${boundary}`;
const body = (...parts: string[]) =>
  Buffer.from(`${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`);
const filePart = (content: string, name = 'file', fileName = 'a.pdf') =>
  `Content-Disposition: form-data; name="${name}"; filename="${fileName}"\r\nContent-Type: application/pdf\r\n\r\n${content}`;
const field = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;
const limits = { maxBytes: 1000, maxFileBytes: 10 };

const problem = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpProblem);
  return error as HttpProblem;
};

describe('parseMultipart', () => {
  it('returns the file (name as sent, type, exact bytes) and the fields', async () => {
    const form = await parseMultipart(
      body(filePart('%PDF-\r\n', 'file', 'dir/ü.pdf'), field('description', 'knee')),
      contentType,
      limits,
    );
    expect(form).toBeInstanceOf(MultipartForm);
    expect(form.files).toHaveLength(1);
    expect(form.files[0]).toMatchObject({ field: 'file', fileName: 'dir/ü.pdf', mediaType: 'application/pdf' });
    expect(form.files[0]!.bytes.toString('latin1')).toBe('%PDF-\r\n');
    expect(form.fields.get('description')).toEqual(['knee']);
  });

  it('gives a file part without Content-Type no type (busboy would say text/plain); an explicit one stays', async () => {
    const untyped = (fileName: string) =>
      `Content-Disposition: form-data; name="file"; filename="${fileName}"\r\n\r\n%PDF-`;
    const typed = (type: string) =>
      `Content-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: ${type}\r\n\r\n%PDF-`;
    const typeOf = async (...parts: string[]) =>
      (await parseMultipart(body(...parts), contentType, limits)).files.map((file) => file.mediaType);

    expect(await typeOf(untyped('a.pdf'))).toEqual([undefined]);
    expect(await typeOf(untyped('a.pdf'), field('description', 'x'))).toEqual([undefined]);
    expect(await typeOf(field('description', 'x'), untyped('a.pdf'))).toEqual([undefined]);
    expect(await typeOf(typed('text/plain'))).toEqual(['text/plain']);
    expect(await typeOf(typed('TEXT/Plain; charset=utf-8'))).toEqual(['text/plain']);
    expect(await typeOf(typed('application/pdf'))).toEqual(['application/pdf']);
    // Header names in any case, a folded value, other headers around it.
    const lowerCase = `content-disposition: form-data; name="file"; filename="a.pdf"\r\nX-Note: 1\r\ncontent-type:\r\n text/plain\r\n\r\nx`;
    expect(await typeOf(lowerCase)).toEqual(['text/plain']);
    // A field whose quoted name merely contains "filename=" is a field: the file's own header decides.
    expect(await typeOf(field('a; filename=b', 'v'), untyped('a.pdf'))).toEqual([undefined]);
  });

  it('reads each file part in order, through a preamble and content that holds the boundary text', async () => {
    const untyped = (content: string) =>
      `Content-Disposition: form-data; name="f1"; filename="a.pdf"\r\n\r\n${content}`;
    const typed = `Content-Disposition: form-data; name="f2"; filename="b.txt"\r\nContent-Type: text/plain\r\n\r\nb`;
    const form = await parseMultipart(
      Buffer.concat([Buffer.from('preamble\r\n'), body(untyped(`x--${boundary}\r\n\r\n`), typed)]),
      contentType,
      { ...limits, maxFileBytes: 100, maxFiles: 2 },
    );
    expect(form.files.map((file) => [file.field, file.mediaType])).toEqual([
      ['f1', undefined],
      ['f2', 'text/plain'],
    ]);
    expect(form.files[0]!.bytes.toString('latin1')).toBe(`x--${boundary}\r\n\r\n`);

    const reversed = await parseMultipart(
      body(typed.replace('f2', 'f1'), untyped('a').replace('f1', 'f2')),
      `multipart/form-data; BOUNDARY="${boundary}"`,
      { ...limits, maxFiles: 2 },
    );
    expect(reversed.files.map((file) => file.mediaType)).toEqual(['text/plain', undefined]);
  });

  it('decodes RFC 5987 file names', async () => {
    const part = `Content-Disposition: form-data; name="file"; filename*=UTF-8''%C3%A9t%C3%A9.pdf\r\n\r\nx`;
    const form = await parseMultipart(body(part), contentType, limits);
    expect(form.files[0]!.fileName).toBe('été.pdf');
  });

  it('takes a file of exactly maxFileBytes, refuses one byte more with 413', async () => {
    expect((await parseMultipart(body(filePart('0123456789')), contentType, limits)).files[0]!.bytes).toHaveLength(10);
    const tooBig = await problem(parseMultipart(body(filePart('0123456789A')), contentType, limits));
    expect(tooBig.status).toBe(413);
    expect(tooBig.extensions.limitBytes).toBe(10);
  });

  it('refuses a second file, too many fields, an over-long field, a missing boundary, a cut body (400)', async () => {
    expect((await problem(parseMultipart(body(filePart('a'), filePart('b')), contentType, limits))).status).toBe(400);
    const manyFields = Array.from({ length: 11 }, (_, i) => field(`f${i}`, 'v'));
    expect((await problem(parseMultipart(body(...manyFields), contentType, limits))).status).toBe(400);
    const longField = field('description', 'x'.repeat(20));
    expect((await problem(parseMultipart(body(longField), contentType, { ...limits, maxFieldBytes: 10 }))).status).toBe(
      400,
    );
    expect((await problem(parseMultipart(body(filePart('a')), 'multipart/form-data', limits))).status).toBe(400);
    const cut = Buffer.from(`--${boundary}\r\n${filePart('abc')}`);
    expect((await problem(parseMultipart(cut, contentType, limits))).status).toBe(400);
  });
});
