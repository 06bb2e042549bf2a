import httpMultipartBodyParser from '@middy/http-multipart-body-parser';
import { type FormFile, MultipartForm, type MultipartLimits } from './multipart-form.ts';
import { badRequest, HttpProblem } from './problem.ts';

/*
 * The multipart/form-data parser: @middy/http-multipart-body-parser (busboy) with its limits checked
 * around it. Its own module, which multipart.ts imports on the first form a function receives: a cold
 * start whose first request is JSON does not load it (docs/performance.md).
 */
const malformed = () => badRequest('The multipart/form-data body is malformed.');

const fileTooLarge = (field: string, limitBytes: number) =>
  new HttpProblem(413, `The file in form field "${field}" exceeds the limit of ${limitBytes} bytes.`, { limitBytes });

/** Longest part header block; a longer one is refused (busboy would read it cut short). */
const MAX_PART_HEADER_BYTES = 16 * 1024;
/** Longest field name (Middy's own bound, which it enforces by failing the parse). */
const MAX_FIELD_NAME_CHARS = 100;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const DASH = 0x2d;

/** RFC 2046's boundary: 1 to 70 characters of a small set, not ending with a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

const boundaryOf = (contentType: string) => {
  const match = /;\s*boundary\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))/i.exec(contentType);
  const boundary = match?.[1]?.replace(/\\(.)/g, '$1') ?? match?.[2];
  if (boundary === undefined) throw badRequest('The multipart/form-data Content-Type has no boundary parameter.');
  if (!BOUNDARY.test(boundary)) {
    throw badRequest(
      "The multipart/form-data boundary must be 1 to 70 characters: letters, digits, space and '()+_,-./:=? (RFC 2046).",
    );
  }
  return boundary;
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
 * Reads the part header blocks from the raw body as busboy delimits them (every `CRLF--boundary`,
 * with a CRLF put before the body), and refuses, before any parsing, what busboy would not report:
 * a body cut short (no closing delimiter: busboy would then fail a file part's stream, which Middy
 * does not listen to, and crash the process), a part whose header block does not end before the next
 * delimiter (busboy would never finish), more than `maxParts` parts (busboy would skip the rest
 * silently), a header block over 16 KiB (busboy would read it cut short).
 *
 * Returns, for each file part in order, whether it has a Content-Type header: busboy reports a part
 * without one as text/plain (RFC 7578's default, meant for text fields), so from busboy alone a file
 * sent without a type cannot be told from a file sent as text/plain. A file part is one busboy reads
 * as a file: a form-data part with a filename, or of type application/octet-stream.
 */
const scanParts = (body: Buffer, boundary: string, maxParts: number): boolean[] => {
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const startOf = (from: number) => body.indexOf(delimiter, from);
  const typesSent: boolean[] = [];
  const first = body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? -2 : startOf(0);
  for (let at = first, parts = 0; ; parts++) {
    if (at === -1) throw malformed(); // cut short: no closing delimiter
    const after = at + delimiter.length;
    if (body[after] === DASH && body[after + 1] === DASH) return typesSent;
    if (parts === maxParts) throw badRequest(`At most ${maxParts} form parts may be sent.`);
    at = startOf(after);
    const end = body.indexOf(HEADER_END, after);
    // A header block that does not end before the next delimiter: busboy would wait forever for the part.
    if (end === -1 || (at !== -1 && end + HEADER_END.length > at)) throw malformed();
    if (end - after > MAX_PART_HEADER_BYTES) throw malformed();
    const lines = headerLines(
      body.toString('latin1', body.subarray(after, after + 2).equals(CRLF) ? after + 2 : after, end),
    );
    const header = (name: string) => lines.find((line) => line.name === name)?.value;
    const disposition = header('content-disposition');
    if (!disposition || disposition.split(';')[0]!.trim().toLowerCase() !== 'form-data') continue;
    const type = header('content-type');
    const isFile =
      parameterNames(disposition).some((name) => name === 'filename' || name === 'filename*') ||
      type?.split(';')[0]?.trim().toLowerCase() === 'application/octet-stream';
    if (isFile) typesSent.push(Boolean(type));
  }
};

/** One part as busboy announced it, before its content. */
interface PartSeen {
  field: string | undefined;
  fileName: string | undefined;
  /** busboy's reading: text/plain when the part has no Content-Type. */
  mediaType: string;
  isFile: boolean;
}

/** A part as @middy/http-multipart-body-parser gives it (every part is read as a file here). */
interface MiddyPart {
  content: Buffer;
}

/**
 * Runs @middy/http-multipart-body-parser on the body, every part read as a file: Middy's field path
 * keeps only the last value of a repeated name, folds `name[]` fields into arrays (and throws outside
 * the parse for `a` then `a[]`), and cuts long values silently; its file path keeps each part's exact
 * bytes. busboy's `isPartAFile` hook sees every part, in order, before its limits apply: that is
 * where the parts are counted and told apart (the usual rule: a filename, or application/octet-stream).
 */
const readParts = async (body: Buffer, boundary: string, maxParts: number) => {
  const seen: PartSeen[] = [];
  const parser = httpMultipartBodyParser({
    // The media type was checked by the endpoint; Middy's own check refuses quoted boundaries.
    disableContentTypeCheck: true,
    busboy: {
      preservePath: true,
      isPartAFile: (field, sentType, fileName) => {
        // busboy keeps the blank before a folded value.
        const mediaType = sentType?.trim() || 'text/plain';
        seen.push({
          field,
          fileName,
          mediaType,
          isFile: fileName !== undefined || mediaType === 'application/octet-stream',
        });
        return true;
      },
      limits: {
        files: maxParts,
        // No part can be cut short: each is smaller than the body. Sizes are checked below.
        fileSize: body.length,
        parts: Number.MAX_SAFE_INTEGER,
        fieldNameSize: MAX_FIELD_NAME_CHARS,
        headerSize: MAX_PART_HEADER_BYTES,
      } as Record<string, number>, // headerSize is busboy's, missing from Middy's types
    },
  });
  const request = {
    event: { headers: { 'content-type': `multipart/form-data; boundary="${boundary}"` }, body, isBase64Encoded: false },
  };
  let failed = false;
  try {
    await parser.before?.(request as never);
  } catch {
    failed = true;
  }
  return { seen, failed, parsed: request.event.body as unknown as Record<string, MiddyPart | MiddyPart[]> };
};

/** Parses a complete body (Lambda has it in memory anyway). Rejects with HttpProblems only. */
export const parseMultipart = async (
  body: Buffer,
  contentType: string,
  limits: MultipartLimits,
): Promise<MultipartForm> => {
  const maxFiles = limits.maxFiles ?? 1;
  const maxFields = limits.maxFields ?? 10;
  const maxFieldBytes = limits.maxFieldBytes ?? 8 * 1024;
  const boundary = boundaryOf(contentType);
  const typesSent = scanParts(body, boundary, maxFiles + maxFields);
  const { seen, failed, parsed } = await readParts(body, boundary, maxFiles + maxFields);

  // Middy fails the parse on these two: say which.
  for (const { field } of seen) {
    if (field === undefined) throw badRequest('Every form part must have a name parameter in its Content-Disposition.');
    if (field.length > MAX_FIELD_NAME_CHARS) {
      throw badRequest(`A form field name exceeds ${MAX_FIELD_NAME_CHARS} characters.`, {
        field: field.slice(0, 64),
      });
    }
  }
  if (failed) throw malformed();

  // Middy keys parts by name, several under one name newest first: back to the order they were sent.
  const sentUnder = new Map<string, MiddyPart[]>();
  for (const [field, parts] of Object.entries(parsed)) {
    sentUnder.set(field, Array.isArray(parts) ? [...parts].reverse() : [parts]);
  }
  const files: FormFile[] = [];
  const fields = new Map<string, string[]>();
  let fileCount = 0;
  let fieldCount = 0;
  for (const part of seen) {
    const field = part.field!;
    if (part.isFile && ++fileCount > maxFiles) throw badRequest(`At most ${maxFiles} file part(s) may be sent.`);
    if (!part.isFile && ++fieldCount > maxFields) throw badRequest(`At most ${maxFields} form fields may be sent.`);
    const content = sentUnder.get(field)?.shift()?.content;
    if (!content) throw malformed();
    if (part.isFile) {
      if (content.length > limits.maxFileBytes) throw fileTooLarge(field, limits.maxFileBytes);
      files.push({ field, fileName: part.fileName, mediaType: part.mediaType, bytes: content });
    } else {
      if (content.length > maxFieldBytes) {
        throw badRequest(`Form field "${field.slice(0, 64)}" exceeds ${maxFieldBytes} bytes.`, { field });
      }
      fields.set(field, [...(fields.get(field) ?? []), content.toString('utf8')]);
    }
  }
  // Should the two readings ever disagree on the file parts, busboy's types stand as they are.
  const typeSent = (i: number) => typesSent.length !== files.length || typesSent[i];
  return new MultipartForm(
    files.map((file, i) => (typeSent(i) ? file : { ...file, mediaType: undefined })),
    fields,
  );
};
