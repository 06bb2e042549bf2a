import { invalid, TooLarge, UnsupportedContent } from '#lib/errors';

/**
 * What an attachment may be: its size, its type, its name. Pure functions, no I/O; every refusal is
 * a domain error (lib/errors.ts), a 4xx at the edge. The figures are documented in docs/attachments.md.
 */

/** Lambda refuses a synchronous invocation whose event is 6 MiB or more ("Request must be smaller than 6291456 bytes"). */
export const LAMBDA_REQUEST_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** Room left in the event for everything but the body: headers (twice), request context, path. */
export const EVENT_ENVELOPE_RESERVE_BYTES = 64 * 1024;
/**
 * Largest multipart body a direct upload may have: API Gateway hands it to Lambda base64-encoded
 * (4 characters per 3 bytes), inside the event: floor((6,291,456 − 65,536) / 4) × 3 = 4,669,440 bytes.
 */
export const MAX_DIRECT_BODY_BYTES = Math.floor((LAMBDA_REQUEST_PAYLOAD_BYTES - EVENT_ENVELOPE_RESERVE_BYTES) / 4) * 3;
/** Largest file a direct upload may carry: 4 MiB, which leaves 475,136 bytes of the body for the form's framing. */
export const MAX_DIRECT_FILE_BYTES = 4 * 1024 * 1024;
/** Largest file of the presigned flow: 1 GiB (one S3 PUT could take 5 GiB; the verifier re-reads every byte). */
export const MAX_PRESIGNED_FILE_BYTES = 1024 * 1024 * 1024;

export const MAX_FILE_NAME_LENGTH = 200;
/** A file name longer than this is refused rather than shortened: it is not a name but a mistake. */
const MAX_RAW_FILE_NAME_LENGTH = 1024;
export const MAX_DOCUMENT_TYPE_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1000;
/** Bytes from the start of a file that the content checks look at. */
export const SNIFF_BYTES = 8 * 1024;

const ascii = (text: string) => Buffer.from(text, 'latin1');
const startsWith = (head: Uint8Array, signature: Uint8Array, offset = 0) =>
  head.length >= offset + signature.length && signature.every((byte, i) => head[offset + i] === byte);
const anyOf =
  (...signatures: Uint8Array[]) =>
  (head: Uint8Array) =>
    signatures.some((signature) => startsWith(head, signature));

const OLE2 = Uint8Array.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ZIP = ascii('PK\x03\x04');

/** UTF-8 (or ASCII) text: decodes without error and holds no NUL. An incomplete last character is fine (head only). */
const isUtf8Text = (head: Uint8Array) => {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
};

export interface AllowedType {
  mediaType: string;
  label: string;
  /** The first is the one appended to a name that has none of them. */
  extensions: string[];
  /** Does the start of the file look like this type? */
  matches: (head: Uint8Array) => boolean;
}

export const ALLOWED_TYPES: readonly AllowedType[] = [
  {
    mediaType: 'application/pdf',
    label: 'PDF',
    extensions: ['pdf'],
    // PDF readers accept the header anywhere in the first 1024 bytes.
    matches: (head) => Buffer.from(head.subarray(0, 1024)).includes('%PDF-'),
  },
  {
    mediaType: 'image/png',
    label: 'PNG image',
    extensions: ['png'],
    matches: anyOf(Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  {
    mediaType: 'image/jpeg',
    label: 'JPEG image',
    extensions: ['jpg', 'jpeg'],
    matches: anyOf(Uint8Array.from([0xff, 0xd8, 0xff])),
  },
  {
    mediaType: 'image/tiff',
    label: 'TIFF image',
    extensions: ['tif', 'tiff'],
    // Little- and big-endian, classic TIFF (42) and BigTIFF (43).
    matches: anyOf(ascii('II*\x00'), ascii('MM\x00*'), ascii('II+\x00'), ascii('MM\x00+')),
  },
  { mediaType: 'image/gif', label: 'GIF image', extensions: ['gif'], matches: anyOf(ascii('GIF87a'), ascii('GIF89a')) },
  { mediaType: 'text/plain', label: 'UTF-8 text', extensions: ['txt'], matches: isUtf8Text },
  { mediaType: 'application/rtf', label: 'RTF document', extensions: ['rtf'], matches: anyOf(ascii('{\\rtf')) },
  { mediaType: 'application/msword', label: 'Word 97-2003 document', extensions: ['doc'], matches: anyOf(OLE2) },
  {
    mediaType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    label: 'Word document',
    extensions: ['docx'],
    matches: anyOf(ZIP),
  },
  { mediaType: 'application/vnd.ms-excel', label: 'Excel 97-2003 workbook', extensions: ['xls'], matches: anyOf(OLE2) },
  {
    mediaType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    label: 'Excel workbook',
    extensions: ['xlsx'],
    matches: anyOf(ZIP),
  },
  {
    mediaType: 'application/dicom',
    label: 'DICOM file',
    extensions: ['dcm'],
    // DICOM Part 10: a 128-byte preamble, then "DICM".
    matches: (head) => startsWith(head, ascii('DICM'), 128),
  },
];

const ALLOWED_MEDIA_TYPES = ALLOWED_TYPES.map((type) => type.mediaType);

/** Spellings clients send for an allowed type. */
const ALIASES: Record<string, string> = { 'image/jpg': 'image/jpeg', 'application/x-pdf': 'application/pdf' };
/** Types that say "I don't know": the file name's extension decides instead. */
const UNKNOWN_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

const typeOf = (mediaType: string) => ALLOWED_TYPES.find((type) => type.mediaType === mediaType);
const extensionOf = (fileName: string) => /\.([A-Za-z0-9]{1,10})$/.exec(fileName)?.[1]?.toLowerCase();

const unsupportedType = (detail: string) =>
  new UnsupportedContent(detail, { accepted: ALLOWED_MEDIA_TYPES, reason: 'content-type' });

/**
 * The allowed type of a file: the declared media type (parameters ignored), or, when the declaration
 * says nothing (absent, application/octet-stream), the type the file name's extension stands for.
 */
export const resolveType = (declared: string | undefined, fileName: string): AllowedType => {
  const mediaType = declared?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (UNKNOWN_TYPES.has(mediaType)) {
    const extension = extensionOf(fileName);
    const byExtension = ALLOWED_TYPES.find((type) => extension && type.extensions.includes(extension));
    if (!byExtension) {
      throw unsupportedType(
        `The file's type was not given and its extension is not one of an allowed type. Send one of: ${ALLOWED_MEDIA_TYPES.join(', ')}.`,
      );
    }
    return byExtension;
  }
  const type = typeOf(ALIASES[mediaType] ?? mediaType);
  if (!type) {
    throw unsupportedType(
      `Content type ${mediaType.slice(0, 100)} is not allowed for attachments. Allowed: ${ALLOWED_MEDIA_TYPES.join(', ')}.`,
    );
  }
  return type;
};

/** The first bytes must look like the declared type (PDF header, image signatures, DICM, …). */
export const assertContentMatches = (type: AllowedType, head: Uint8Array) => {
  if (!type.matches(head.subarray(0, SNIFF_BYTES))) throw contentMismatch(type);
};

const contentMismatch = (type: AllowedType) =>
  new UnsupportedContent(`The file's content is not a ${type.label}, as its content type ${type.mediaType} says.`, {
    accepted: ALLOWED_MEDIA_TYPES,
    reason: 'content',
  });

export const assertSize = (size: number, limitBytes: number) => {
  if (size === 0) throw invalid('The file is empty.', { reason: 'empty' });
  if (size > limitBytes) {
    throw new TooLarge(`The file exceeds the limit of ${limitBytes} bytes for this upload.`, {
      limitBytes,
      reason: 'size',
    });
  }
};

const isControl = (code: number) => code <= 0x1f || (code >= 0x7f && code <= 0x9f);
/** C0/C1 controls; bidirectional marks, overrides and isolates (they disguise extensions); zero-width characters. */
const isInvisible = (code: number) =>
  isControl(code) ||
  (code >= 0x200b && code <= 0x200f) ||
  (code >= 0x202a && code <= 0x202e) ||
  (code >= 0x2060 && code <= 0x2069) ||
  code === 0xfeff;
const withoutInvisible = (text: string) =>
  Array.from(text)
    .filter((character) => !isInvisible(character.codePointAt(0)!))
    .join('');
// Reserved on common file systems.
const RESERVED = /[<>:"|?*]/g;

/**
 * A file name safe to store and to offer back: no path, no invisible or reserved characters, no
 * leading dot, blanks collapsed. Refused when nothing usable is left. `fileNameFor` then fits it to
 * its type and length.
 */
export const cleanFileName = (raw: string | undefined): string => {
  if (raw === undefined || raw.trim() === '') throw badFileName('The file has no name: send a filename.');
  if (raw.length > MAX_RAW_FILE_NAME_LENGTH) {
    throw badFileName(`The file name is longer than ${MAX_RAW_FILE_NAME_LENGTH} characters.`);
  }
  let name = raw.normalize('NFC');
  name = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  name = withoutInvisible(name.replace(/[\t\n\v\f\r]/g, ' '))
    .replace(RESERVED, '_')
    .replace(/\s+/g, ' ')
    .replace(/^[\s.]+|[\s.]+$/g, '');
  if (name === '') throw badFileName('The file name has no usable characters once its path and controls are removed.');
  return name;
};

/**
 * A clean name ending in an extension of its (verified) type: one is appended when missing or
 * different ("scan" → "scan.pdf"), and the part before it is cut to fit MAX_FILE_NAME_LENGTH.
 */
export const fileNameFor = (cleanName: string, type: AllowedType): string => {
  const extension = extensionOf(cleanName);
  let base = cleanName;
  let suffix = `.${type.extensions[0]}`;
  if (extension && type.extensions.includes(extension)) {
    base = cleanName.slice(0, -(extension.length + 1));
    suffix = cleanName.slice(-(extension.length + 1));
  }
  const room = MAX_FILE_NAME_LENGTH - suffix.length;
  const characters = Array.from(base);
  if (characters.length > room) base = characters.slice(0, room).join('').trimEnd();
  return `${base}${suffix}`;
};

const badFileName = (detail: string) => invalid(detail, { reason: 'file-name' });

/** Optional descriptive text: trimmed, bounded, no control characters (line breaks allowed in descriptions). */
export const descriptiveText = (
  name: 'documentType' | 'description',
  value: unknown,
  maxLength: number,
): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`${name} must be a string.`, { field: name });
  const text = value.trim();
  if (text === '') return undefined;
  if (Array.from(text).length > maxLength) {
    throw invalid(`${name} must be at most ${maxLength} characters.`, { field: name });
  }
  const allowed = name === 'description' ? ['\t', '\n', '\r'] : [];
  if (Array.from(text).some((c) => isControl(c.codePointAt(0)!) && !allowed.includes(c))) {
    throw invalid(`${name} must not contain control characters.`, { field: name });
  }
  return text;
};

/** A SHA-256 as 64 hex digits (either case); returned lower-case. */
export const sha256Hex = (value: unknown, field = 'sha256'): string => {
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{64}$/.test(value)) {
    throw invalid(`${field} must be the file's SHA-256 as 64 hexadecimal digits.`, { field });
  }
  return value.toLowerCase();
};

/** The content type a download is served with (text gets its charset). */
export const servedContentType = (mediaType: string) =>
  mediaType === 'text/plain' ? 'text/plain; charset=utf-8' : mediaType;
