import fc from 'fast-check';
import { longString, prototypeKey } from './body-cases.ts';

/**
 * The hostile-input suite's cases outside a body's JSON value: raw bytes (invalid UTF-8, raw control
 * characters, truncation, other encodings), path segments, headers and query names, oversized request heads,
 * content types and methods.
 */

const INVALID_UTF8: Record<string, number[]> = {
  'byte FF': [0xff],
  'byte FE': [0xfe],
  'lone continuation 80': [0x80],
  'overlong "/" C0 AF': [0xc0, 0xaf],
  'overlong "\\"" C0 A2': [0xc0, 0xa2],
  'overlong E0 80 AF': [0xe0, 0x80, 0xaf],
  'surrogate ED A0 80': [0xed, 0xa0, 0x80],
  'surrogate ED BF BF': [0xed, 0xbf, 0xbf],
  'beyond U+10FFFF F4 90 80 80': [0xf4, 0x90, 0x80, 0x80],
  '5-byte F8 88 80 80 80': [0xf8, 0x88, 0x80, 0x80, 0x80],
  'truncated C3': [0xc3],
  'truncated E2 82': [0xe2, 0x82],
};
const RAW_CONTROLS = [0x00, 0x01, 0x08, 0x0a, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f];

class BytesCase {
  constructor(
    readonly label: string,
    readonly apply: (bytes: Buffer) => Buffer,
  ) {}
  [fc.toStringMethod]() {
    return this.label;
  }
}

const QUOTE = 0x22;

/** Where string contents start in JSON text without escaped quotes: after every other quote. */
const stringStarts = (bytes: Buffer) => {
  const starts: number[] = [];
  let quotes = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === QUOTE && quotes++ % 2 === 0) starts.push(i + 1);
  return starts;
};

const insertAt = (bytes: Buffer, where: number, inserted: number[], inString: boolean) => {
  const starts = stringStarts(bytes);
  const at = inString && starts.length ? starts[where % starts.length]! : where % (bytes.length + 1);
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(inserted), bytes.subarray(at)]);
};

export const bytesMutation = fc.oneof(
  fc
    .tuple(fc.constantFrom(...Object.keys(INVALID_UTF8)), fc.nat(), fc.boolean())
    .map(
      ([name, where, inString]) =>
        new BytesCase(`invalid UTF-8 (${name}) ${inString ? 'in string' : 'at byte'} #${where}`, (bytes) =>
          insertAt(bytes, where, INVALID_UTF8[name]!, inString),
        ),
    ),
  fc
    .tuple(fc.constantFrom(...RAW_CONTROLS), fc.nat(), fc.boolean())
    .map(
      ([byte, where, inString]) =>
        new BytesCase(
          `raw byte ${byte.toString(16).padStart(2, '0')} ${inString ? 'in string' : 'at byte'} #${where}`,
          (bytes) => insertAt(bytes, where, [byte], inString),
        ),
    ),
  fc
    .nat()
    .map((where) => new BytesCase(`cut after byte #${where}`, (bytes) => bytes.subarray(0, where % bytes.length))),
  fc.constant(
    new BytesCase('UTF-8 byte order mark first', (bytes) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])),
  ),
  fc.constant(new BytesCase('UTF-16LE', (bytes) => Buffer.from(bytes.toString('utf8'), 'utf16le'))),
  fc.constant(
    new BytesCase('UTF-16LE with byte order mark', (bytes) =>
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(bytes.toString('utf8'), 'utf16le')]),
    ),
  ),
);

/* ------------------------------------------------------------------------------------------------
 * Path segments: encoded slashes, traversal, malformed and overlong percent-encoding, very long ids.
 */

export class SegmentCase {
  constructor(
    readonly variable: string,
    readonly segment: string,
  ) {}
  [fc.toStringMethod]() {
    return `{${this.variable}} = ${this.segment.length > 80 ? `${this.segment.slice(0, 40)}… (${this.segment.length} chars)` : this.segment}`;
  }
}

const percentEncoded = (bytes: Uint8Array) =>
  Array.from(bytes, (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** `{S}` stands for the sentinel's id of that variable: traversal aimed at data that must not change. */
const HOSTILE_SEGMENTS = [
  '%2F %2f a%2Fb ..%2F ..%2F{S} ..%2F..%2F{S} x%2F..%2F{S} %2e%2e %2E%2E .%2e %2e %2e%2e%2F{S}',
  '%2e%2e%5C{S} ..%5C{S} %5C .. . %ZZ % %4 %G0 a% %% %25 %25ZZ %C0%AF %C0%AE%C0%AE%C0%AF{S}',
  '%E0%80%AF %ED%A0%80 %ED%BF%BF %F4%90%80%80 %FF %FE%FF %00 {S}%00 a%00b %0A %0D%0A',
  '{S}%0D%0AX-Injected:%201 %09 %20 %20{S} {S}%20 + %2B %23 %3F {S}%3F__proto__=1 %26 %3B {S};x %40',
  ': @ ~ * %E2%80%AE %EF%BB%BF{S} %F0%9F%98%80 __proto__ constructor prototype hasOwnProperty',
  '%5F_proto__',
]
  .join(' ')
  .split(' ');

const LONG_ID_LENGTHS = [64, 65, 1_000, 8_000];

export const hostileSegment = (sentinel: string) =>
  fc.oneof(
    {
      arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS).map((segment) => segment.replaceAll('{S}', sentinel)),
      weight: 6,
    },
    { arbitrary: fc.constantFrom(...LONG_ID_LENGTHS).map((length) => 'a'.repeat(length)), weight: 1 },
    { arbitrary: fc.constantFrom(65, 2_000).map((length) => '%41'.repeat(length)), weight: 1 },
    {
      arbitrary: fc
        .string({ unit: 'binary', minLength: 1, maxLength: 12 })
        .map((text) => percentEncoded(Buffer.from(text))),
      weight: 1,
    },
    { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 8 }).map(percentEncoded), weight: 1 },
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/), weight: 1 },
  );

/* ------------------------------------------------------------------------------------------------
 * Headers and query names.
 */

const headerValue = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((code) => code !== 0x7f)
    .map((code) => String.fromCharCode(code)),
  maxLength: 40,
});

/** Header and query names that mean nothing to the API: they must change nothing. */
const meaninglessName = fc.oneof(
  prototypeKey,
  fc.constantFrom('__PROTO__', 'Constructor', 'x-hostile', 'x-amzn-requestid', 'x-forwarded-for'),
);

class HeaderCase {
  constructor(
    readonly headers: [string, string][],
    readonly query: [string, string][],
    readonly meaningless: boolean,
  ) {}
  [fc.toStringMethod]() {
    const headers = this.headers.map(
      ([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 30)}… (${value.length} chars)` : value}`,
    );
    const query = this.query.map(([name, value]) => `${name}=${value.slice(0, 30)}`);
    return `headers [${headers.join(' | ')}] query [${query.join('&')}]`;
  }
}

export const headerCase = (apiKey: string) => {
  const meaningless = fc.record({
    headers: fc.array(fc.tuple(meaninglessName, headerValue), { maxLength: 3 }),
    // Validly encoded only: a malformed escape (`%ZZ`) is refused for the whole URL (400, before routing).
    query: fc.array(fc.tuple(meaninglessName, fc.constantFrom('1', 'x', '', '%25ZZ', '__proto__', '{}')), {
      maxLength: 3,
    }),
  });
  const meaningful = fc.array(
    fc.oneof(
      fc.tuple(fc.constant('content-type'), fc.constantFrom('application/json', 'text/plain', 'application/xml', '')),
      fc.tuple(fc.constant('x-api-key'), fc.constantFrom('srk_invalid', '', '__proto__', apiKey)),
      fc.tuple(
        fc.constantFrom('if-match', 'if-none-match'),
        fc.constantFrom(
          '*',
          '"1"',
          'W/"1"',
          '"999999999999999999999999999999999999999999"',
          '',
          ',,,',
          '"',
          '__proto__',
        ),
      ),
      fc.tuple(
        fc.constantFrom('x-hostile', 'x-api-key', 'content-type', 'if-match', '__proto__', 'constructor'),
        fc.constantFrom(4_096, 8_000).map(longString),
      ),
      fc.tuple(
        fc.constantFrom('content-length', 'transfer-encoding', 'host', 'expect'),
        fc.constantFrom('', 'x', '-1', 'chunked, chunked', '100-continue'),
      ),
    ),
    { maxLength: 3 },
  );
  const pagingQuery = fc.array(
    fc.tuple(
      fc.constantFrom('pageSize', 'cursor', 'pageSize'),
      fc.constantFrom('0', '101', '-1', '1e400', 'x', '', longString(300), '%ZZ'),
    ),
    { maxLength: 2 },
  );
  return fc.oneof(
    meaningless.map(({ headers, query }) => new HeaderCase(headers, query, true)),
    fc
      .tuple(meaningless, meaningful, pagingQuery)
      .map(
        ([extra, headers, query]) => new HeaderCase([...extra.headers, ...headers], [...extra.query, ...query], false),
      ),
  );
};

export const withQuery = (path: string, query: [string, string][]) =>
  query.length ? `${path}?${query.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join('&')}` : path;

/* ------------------------------------------------------------------------------------------------
 * Request heads over the gateway limit (16 KiB).
 */

class OversizedHead {
  constructor(
    readonly what: string,
    readonly headers: [string, string][],
    readonly pathTail = '',
  ) {}
  [fc.toStringMethod]() {
    return this.what;
  }
}

export const oversizedHead = fc.constantFrom(
  new OversizedHead('one 17 KiB header', [['x-hostile', longString(17 * 1024)]]),
  new OversizedHead('one 24 KiB header', [['x-hostile', longString(24 * 1024)]]),
  new OversizedHead(
    '300 headers of 64 bytes',
    Array.from({ length: 300 }, (_, i) => [`x-hostile-${i}`, 'v'.repeat(64)]),
  ),
  new OversizedHead('a 17 KiB query string', [], `?q=${longString(17 * 1024)}`),
);

/* ------------------------------------------------------------------------------------------------
 * Methods and content types.
 */

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'];

const CONTENT_TYPES = [
  null,
  '',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/xml',
  'text/xml',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'application/jsonx',
  'application/json-patch+json',
  'application/problem+json',
  'application/merge-patch+json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json;;',
  '*/*',
  'application/*',
  'json',
  '__proto__',
  'application/__proto__',
];

export const mediaTypeOf = (contentType: string | null) => contentType?.split(';')[0]?.trim().toLowerCase() ?? '';

export const contentType = fc.oneof(
  { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 4 },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom('text', 'application', 'multipart', 'image', '*'),
        fc.stringMatching(/^[a-z0-9.+-]{1,16}$/),
      )
      .map(([type, subtype]) => `${type}/${subtype}`),
    weight: 1,
  },
);
