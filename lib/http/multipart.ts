import { createHash } from 'node:crypto';
import busboy from 'busboy';
import { badRequest, HttpProblem } from './problem.ts';

/** Bounds of a multipart/form-data body; every one exceeded is a 4xx, never a partial parse. */
export interface MultipartLimits {
  /** The whole body, decoded (after API Gateway's base64). */
  maxBytes: number;
  /** One file part. */
  maxFileBytes: number;
  maxFiles?: number;
  maxFields?: number;
  /** One non-file field's value, in bytes. */
  maxFieldBytes?: number;
}

export interface FormFile {
  field: string;
  /** As sent (path and all: sanitizing is the caller's business); undefined without a filename parameter. */
  fileName: string | undefined;
  /** The part's own Content-Type (type/subtype, as busboy reads it); undefined when the part has none. */
  mediaType: string | undefined;
  bytes: Buffer;
}

/** A parsed multipart/form-data body. A class, so a handler can tell it from any parsed JSON. */
export class MultipartForm {
  constructor(
    readonly files: readonly FormFile[],
    /** Every value of every non-file field, in order. */
    readonly fields: ReadonlyMap<string, readonly string[]>,
  ) {}

  /**
   * What the form says, as plain JSON: every field's values and each file's name, type, size and
   * SHA-256, not its bytes. Two sendings of the same form give the same JSON whatever their
   * boundaries, which is what idempotent retries compare (lib/http/idempotency.ts).
   */
  toJSON() {
    return {
      fields: Object.fromEntries(this.fields),
      files: this.files.map(({ field, fileName, mediaType, bytes }) => ({
        field,
        fileName: fileName ?? null,
        mediaType: mediaType ?? null,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      })),
    };
  }
}

const malformed = () => badRequest('The multipart/form-data body is malformed.');

export const fileTooLarge = (field: string, limitBytes: number) =>
  new HttpProblem(413, `The file in form field "${field}" exceeds the limit of ${limitBytes} bytes.`, { limitBytes });

/** busboy's bound on one part's header block; a longer one fails the whole body. */
const MAX_PART_HEADER_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

const boundaryOf = (contentType: string) => {
  const match = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))/i.exec(contentType);
  return match?.[1]?.replace(/\\(.)/g, '$1') ?? match?.[2];
};

/** The header lines of one part (folded lines joined), names in lower case. */
const headerLines = (block: string) =>
  block
    .replace(/\r\n[ \t]+/g, ' ')
    .split('\r\n')
    .map((line) => {
      const colon = line.indexOf(':');
      return colon === -1
        ? { name: '', value: '' }
        : { name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() };
    });

/** Parameter names of a header value, quoted strings (which may hold `;` and `=`) left out. */
const parameterNames = (value: string) =>
  value
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .split(';')
    .slice(1)
    .map((parameter) => parameter.split('=')[0]!.trim().toLowerCase());

/**
 * For each file part of the body, in order: whether it has a Content-Type header. busboy reports a
 * part without one as text/plain (RFC 7578's default, meant for text fields), so from busboy alone a
 * file sent without a type cannot be told from a file sent as text/plain. The part header blocks
 * are read here from the raw body as busboy delimits them (`CRLF--boundary`, then CRLF), at most
 * `maxParts` of them and at most 16 KiB each, as busboy bounds them; a file part is one busboy reads
 * as a file: a form-data part with a filename, or of type application/octet-stream.
 */
const fileTypesSent = (body: Buffer, boundary: string, maxParts: number): boolean[] => {
  // busboy searches for CRLF--boundary with a CRLF put before the body: a first boundary needs no preamble.
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const next = (from: number) => {
    const at = body.indexOf(delimiter, from);
    return at === -1 ? -1 : at + delimiter.length;
  };
  const sent: boolean[] = [];
  let parts = 0;
  let after = body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? delimiter.length - 2 : next(0);
  for (; after !== -1 && parts < maxParts; after = next(after)) {
    if (body[after] === 0x2d && body[after + 1] === 0x2d) break; // the closing delimiter
    if (body[after] !== 0x0d || body[after + 1] !== 0x0a) continue; // not a delimiter: part content
    parts++;
    const start = after + 2;
    const end = body.subarray(start, start + 2).equals(CRLF) ? start : body.indexOf(HEADER_END, start);
    if (end === -1 || end - start > MAX_PART_HEADER_BYTES) break;
    const lines = headerLines(body.toString('latin1', start, end));
    const first = (name: string) => lines.find((line) => line.name === name)?.value;
    const disposition = first('content-disposition');
    if (!disposition || disposition.split(';')[0]!.trim().toLowerCase() !== 'form-data') continue;
    const type = first('content-type');
    const isFile =
      parameterNames(disposition).some((name) => name === 'filename' || name === 'filename*') ||
      type?.split(';')[0]?.trim().toLowerCase() === 'application/octet-stream';
    if (isFile) sent.push(Boolean(type));
  }
  return sent;
};

/** Parses a complete body (Lambda has it in memory anyway). Rejects with HttpProblems only. */
export const parseMultipart = (body: Buffer, contentType: string, limits: MultipartLimits): Promise<MultipartForm> => {
  const maxFiles = limits.maxFiles ?? 1;
  const maxFields = limits.maxFields ?? 10;
  const maxFieldBytes = limits.maxFieldBytes ?? 8 * 1024;
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        preservePath: true,
        defParamCharset: 'utf8',
        defCharset: 'utf8',
        limits: {
          files: maxFiles,
          // Busboy flags a file that reaches fileSize; one more byte lets a file of exactly maxFileBytes pass.
          fileSize: limits.maxFileBytes + 1,
          fields: maxFields,
          fieldSize: maxFieldBytes,
          parts: maxFiles + maxFields,
        },
      });
    } catch {
      reject(badRequest('The multipart/form-data Content-Type has no boundary parameter.'));
      return;
    }
    const files: Array<Omit<FormFile, 'bytes'> & { chunks: Buffer[] }> = [];
    const fields = new Map<string, string[]>();
    let failure: HttpProblem | undefined;
    const fail = (problem: HttpProblem) => {
      failure ??= problem;
    };

    parser.on('file', (field, stream, info) => {
      const file = { field, fileName: info.filename, mediaType: info.mimeType, chunks: [] as Buffer[] };
      files.push(file);
      stream.on('data', (chunk: Buffer) => file.chunks.push(chunk));
      stream.on('limit', () => fail(fileTooLarge(field, limits.maxFileBytes)));
      // A body cut short fails the file stream too; the parser's own error then settles the promise.
      stream.on('error', () => fail(malformed()));
    });
    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) {
        fail(badRequest(`Form field "${name.slice(0, 64)}" exceeds ${maxFieldBytes} bytes.`, { field: name }));
      }
      fields.set(name, [...(fields.get(name) ?? []), value]);
    });
    parser.on('filesLimit', () => fail(badRequest(`At most ${maxFiles} file part(s) may be sent.`)));
    parser.on('fieldsLimit', () => fail(badRequest(`At most ${maxFields} form fields may be sent.`)));
    parser.on('partsLimit', () => fail(badRequest(`At most ${maxFiles + maxFields} form parts may be sent.`)));
    parser.on('error', () => reject(failure ?? malformed()));
    parser.on('close', () => {
      if (failure) return reject(failure);
      // Should the two readings ever disagree on the file parts, busboy's types stand as they are.
      const typesSent = fileTypesSent(body, boundaryOf(contentType) ?? '', maxFiles + maxFields);
      const typeSent = (i: number) => typesSent.length !== files.length || typesSent[i];
      resolve(
        new MultipartForm(
          files.map(({ chunks, ...file }, i) => ({
            ...file,
            mediaType: typeSent(i) ? file.mediaType : undefined,
            bytes: Buffer.concat(chunks),
          })),
          fields,
        ),
      );
    });
    parser.end(body);
  });
};
