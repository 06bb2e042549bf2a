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
  /** The part's own Content-Type, as sent. */
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
      resolve(
        new MultipartForm(
          files.map(({ chunks, ...file }) => ({ ...file, bytes: Buffer.concat(chunks) })),
          fields,
        ),
      );
    });
    parser.end(body);
  });
};
