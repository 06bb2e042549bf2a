import { describe, expect, it } from 'vitest';
import {
  ALLOWED_TYPES,
  assertContentMatches,
  assertSize,
  cleanFileName,
  EVENT_ENVELOPE_RESERVE_BYTES,
  fileNameFor,
  LAMBDA_REQUEST_PAYLOAD_BYTES,
  MAX_DIRECT_BODY_BYTES,
  MAX_DIRECT_FILE_BYTES,
  MAX_FILE_NAME_LENGTH,
  MAX_PRESIGNED_FILE_BYTES,
  resolveType,
} from '#lib/attachments/content-policy';
import { DomainError } from '#lib/errors';
import { problemOf } from '#lib/http/domain-errors';
import { GATEWAY_LIMITS } from '#lib/http/gateway-responses';

const typeOf = (mediaType: string) => ALLOWED_TYPES.find((type) => type.mediaType === mediaType)!;
const statusOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    // Refusals are domain errors; the status is the one the HTTP edge answers with.
    if (error instanceof DomainError) return problemOf(error).status;
    throw error;
  }
  return 'accepted';
};

describe('size limits', () => {
  it('a direct upload body of the limit, base64-encoded, fits a Lambda event with its envelope', () => {
    expect(MAX_DIRECT_FILE_BYTES).toBe(4_194_304);
    expect(MAX_DIRECT_BODY_BYTES).toBe(4_669_440);
    expect(LAMBDA_REQUEST_PAYLOAD_BYTES).toBe(6_291_456);
    expect(LAMBDA_REQUEST_PAYLOAD_BYTES).toBe(GATEWAY_LIMITS.maxLambdaRequestBytes);
    const base64 = Buffer.alloc(MAX_DIRECT_BODY_BYTES).toString('base64').length;
    expect(base64 + EVENT_ENVELOPE_RESERVE_BYTES).toBeLessThanOrEqual(LAMBDA_REQUEST_PAYLOAD_BYTES);
    expect(
      Buffer.alloc(MAX_DIRECT_BODY_BYTES + 3).toString('base64').length + EVENT_ENVELOPE_RESERVE_BYTES,
    ).toBeGreaterThan(LAMBDA_REQUEST_PAYLOAD_BYTES);
    expect(MAX_DIRECT_BODY_BYTES - MAX_DIRECT_FILE_BYTES).toBeGreaterThan(100 * 1024); // room for the form
  });

  it('presigned uploads go to 1 GiB', () => {
    expect(MAX_PRESIGNED_FILE_BYTES).toBe(1_073_741_824);
  });

  it('refuses empty (400) and oversize (413) files', () => {
    expect(statusOf(() => assertSize(0, 10))).toBe(400);
    expect(statusOf(() => assertSize(10, 10))).toBe('accepted');
    expect(statusOf(() => assertSize(11, 10))).toBe(413);
  });
});

describe('types', () => {
  it('resolves declared types, ignoring parameters and case, with a few aliases', () => {
    expect(resolveType('Application/PDF', 'a').mediaType).toBe('application/pdf');
    expect(resolveType('text/plain; charset=utf-8', 'a').mediaType).toBe('text/plain');
    expect(resolveType('image/jpg', 'a').mediaType).toBe('image/jpeg');
  });

  it('falls back to the extension only when the declaration says nothing', () => {
    expect(resolveType(undefined, 'a.TIF').mediaType).toBe('image/tiff');
    expect(resolveType('application/octet-stream', 'a.dcm').mediaType).toBe('application/dicom');
    expect(statusOf(() => resolveType('application/octet-stream', 'a.exe'))).toBe(415);
    expect(statusOf(() => resolveType('text/html', 'a.pdf'))).toBe(415);
  });

  it('checks first bytes: PDF, PNG, JPEG, TIFF (both byte orders), DICOM at offset 128, UTF-8 text, OLE2, ZIP', () => {
    const ok: Array<[string, Uint8Array]> = [
      ['application/pdf', Buffer.from('%PDF-1.4')],
      ['application/pdf', Buffer.concat([Buffer.alloc(100, 0x20), Buffer.from('%PDF-1.7')])],
      ['image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])],
      ['image/jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xdb])],
      ['image/tiff', Buffer.from('II*\x00', 'latin1')],
      ['image/tiff', Buffer.from('MM\x00*', 'latin1')],
      ['image/gif', Buffer.from('GIF89a')],
      ['application/dicom', Buffer.concat([Buffer.alloc(128), Buffer.from('DICM')])],
      ['text/plain', Buffer.from('naïve café\n', 'utf8')],
      ['text/plain', Buffer.from('é', 'utf8').subarray(0, 1)], // a character cut by the sniff window
      ['application/msword', Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])],
      ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', Buffer.from('PK\x03\x04', 'latin1')],
      ['application/rtf', Buffer.from('{\\rtf1\\ansi')],
    ];
    for (const [mediaType, head] of ok)
      expect(statusOf(() => assertContentMatches(typeOf(mediaType), head))).toBe('accepted');
    const bad: Array<[string, Uint8Array]> = [
      ['application/pdf', Buffer.from('<html>')],
      ['image/png', Buffer.from([0xff, 0xd8, 0xff])],
      ['application/dicom', Buffer.from('DICM')],
      ['text/plain', Buffer.from([0x61, 0x00])],
      ['text/plain', Buffer.from([0xff, 0xfe, 0x61, 0x00])],
      ['application/msword', Buffer.from('PK\x03\x04', 'latin1')],
    ];
    for (const [mediaType, head] of bad)
      expect(statusOf(() => assertContentMatches(typeOf(mediaType), head))).toBe(415);
  });
});

describe('file names', () => {
  const pdf = typeOf('application/pdf');
  const name = (raw: string | undefined, type = pdf) => fileNameFor(cleanFileName(raw), type);

  it('strips paths, invisible and reserved characters, leading dots and extra blanks', () => {
    expect(name('/var/tmp/../x.pdf')).toBe('x.pdf');
    expect(name('C:\\a\\b.pdf')).toBe('b.pdf');
    expect(name('a\u0000b\u001fc\u007f.pdf')).toBe('abc.pdf');
    expect(name('invoice\u202Efdp.exe')).toBe('invoicefdp.exe.pdf');
    expect(name('zero\u200Bwidth\uFEFF.pdf')).toBe('zerowidth.pdf');
    expect(name('<a>|"b"?.pdf')).toBe('_a___b__.pdf');
    expect(name('...hidden.pdf')).toBe('hidden.pdf');
    expect(name('  lots   of\tspace  .pdf  ')).toBe('lots of space .pdf');
    expect(name('Befund Müller.pdf')).toBe('Befund Müller.pdf');
    expect(name('e\u0301.pdf')).toBe('\u00e9.pdf'); // NFC
  });

  it('keeps a matching extension, else appends the type’s', () => {
    expect(name('scan.PDF')).toBe('scan.PDF');
    expect(name('scan')).toBe('scan.pdf');
    expect(name('photo.jpeg', typeOf('image/jpeg'))).toBe('photo.jpeg');
    expect(name('photo.png', typeOf('image/jpeg'))).toBe('photo.png.jpg');
    expect(name('study', typeOf('application/dicom'))).toBe('study.dcm');
  });

  it(`cuts long names to ${MAX_FILE_NAME_LENGTH} characters, keeping the extension (and whole characters)`, () => {
    const long = name(`${'a'.repeat(500)}.pdf`);
    expect(long).toHaveLength(MAX_FILE_NAME_LENGTH);
    expect(long.endsWith('.pdf')).toBe(true);
    const emoji = name(`${'😀'.repeat(300)}.pdf`);
    expect(Array.from(emoji)).toHaveLength(MAX_FILE_NAME_LENGTH);
    expect(emoji.endsWith('😀.pdf')).toBe(true);
  });

  it('refuses names that are missing, empty once cleaned, or absurdly long (400)', () => {
    for (const raw of [undefined, '', '   ', '/', '../..', '\u0000', '\u202E', '.', 'x'.repeat(1025)]) {
      expect(statusOf(() => cleanFileName(raw))).toBe(400);
    }
  });
});
