import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type Route, routes } from '#lib/routes/route-table';
import { uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';

/**
 * The input side of the hostile-input suite: every route of the route table with a valid body to
 * start from, and the arbitraries that break bodies, path ids, headers and bytes. Cases print as
 * one line (fast-check shows them as counterexamples), never as the megabytes they may carry.
 */

/** The route table, imported here and only here: when it moves, this is the line to change. */
export const apiRoutes: readonly Route[] = routes;

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND'];

/* ------------------------------------------------------------------------------------------------
 * Bodies: JSON values, plus raw JSON text for what JSON.stringify cannot write (1e400, 41-digit
 * integers, 10,000 levels). Objects may own a `__proto__` member, as JSON.parse makes them.
 */

export class RawJson {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}
}

export type Body = null | boolean | number | string | RawJson | Body[] | { [name: string]: Body };

/** Stands for the case's id in fixtures; replaced in the JSON text when a case is sent. */
export const ID = '@@id@@';

const isObject = (value: Body | undefined): value is { [name: string]: Body } =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof RawJson);

export const jsonText = (value: Body): string => {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .map((name) => `${JSON.stringify(name)}:${jsonText(value[name]!)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
};

/** A copy with an own member `name`, even when the name is `__proto__`. */
export const withMember = (object: { [name: string]: Body }, name: string, value: Body) => {
  const copy = { ...object };
  Object.defineProperty(copy, name, { value, enumerable: true, writable: true, configurable: true });
  return copy;
};

export const label = (value: Body | undefined): string => {
  if (value === undefined) return 'nothing';
  if (value instanceof RawJson) return value.label;
  if (typeof value === 'string') {
    return value.length <= 24
      ? JSON.stringify(value)
      : `${JSON.stringify(value.slice(0, 16))}… (${value.length} chars)`;
  }
  if (Array.isArray(value)) {
    if (value.length > 3) return `[${value.length} × ${label(value[0])}]`;
    return `[${value.map(label).join(', ')}]`;
  }
  if (isObject(value)) {
    const names = Object.keys(value);
    const shown = names.slice(0, 3).map((name) => `${JSON.stringify(name)}: ${label(value[name])}`);
    return `{${shown.join(', ')}${names.length > 3 ? `, … ${names.length} members` : ''}}`;
  }
  return JSON.stringify(value);
};

/** Every string in a body longer than an error text may quote (100 characters). */
export const longStrings = (value: Body, found: string[] = []): string[] => {
  if (typeof value === 'string' && value.length > 100) found.push(value);
  else if (Array.isArray(value)) for (const item of value.slice(0, 5)) longStrings(item, found);
  else if (isObject(value)) for (const name of Object.keys(value)) longStrings(value[name]!, found);
  return found;
};

/** Write-only values of a body (passwords, TOTP seeds): never in any answer. */
export const secretsOf = (value: Body, found: string[] = []): string[] => {
  if (Array.isArray(value)) for (const item of value) secretsOf(item, found);
  else if (isObject(value)) {
    for (const name of Object.keys(value)) {
      const member = value[name]!;
      if ((name === 'password' || name === 'totpSecret') && typeof member === 'string' && member.length >= 8) {
        found.push(member);
      } else secretsOf(member, found);
    }
  }
  return found;
};

/* ------------------------------------------------------------------------------------------------
 * Mutations of a valid body, at a JSON path of it. On a path an earlier mutation removed, a change
 * applies to its deepest remaining part and a removal does nothing.
 */

type Step = string | number;
export interface Mutation {
  label: string;
  apply: (body: Body) => Body;
}

const REMOVE = Symbol('remove');
const pointer = (path: Step[]) => (path.length ? path.map((step) => `/${step}`).join('') : '/');

const update = (node: Body, path: Step[], change: (value: Body) => Body | typeof REMOVE): Body => {
  const [step, ...rest] = path;
  const exists =
    step !== undefined &&
    ((Array.isArray(node) && typeof step === 'number' && step < node.length) ||
      (isObject(node) && Object.hasOwn(node, step)));
  if (!exists) {
    const changed = change(node);
    return changed === REMOVE ? node : changed;
  }
  const child = (node as Record<Step, Body>)[step]!;
  const changed = rest.length === 0 ? change(child) : update(child, rest, change);
  if (Array.isArray(node)) {
    const copy = [...node];
    if (changed === REMOVE) copy.splice(step as number, 1);
    else copy[step as number] = changed;
    return copy;
  }
  if (changed === REMOVE) {
    const copy = { ...(node as { [name: string]: Body }) };
    delete copy[step as string];
    return copy;
  }
  return withMember(node as { [name: string]: Body }, step as string, changed);
};

export const pathsOf = (value: Body, prefix: Step[] = []): Step[][] => {
  const paths = [prefix];
  if (Array.isArray(value)) for (const [i, item] of value.entries()) paths.push(...pathsOf(item, [...prefix, i]));
  else if (isObject(value))
    for (const name of Object.keys(value)) paths.push(...pathsOf(value[name]!, [...prefix, name]));
  return paths;
};

const nodeAt = (value: Body, path: Step[]) => {
  let node: Body | undefined = value;
  for (const step of path) node = (node as Record<Step, Body>)[step];
  return node;
};

/**
 * Where in a fixture to mutate. Half the picks fall under `focus` when given: members the service
 * stores as sent (a wrong value there is kept, not refused), where what is stored must be what was sent.
 */
export const placesOf = (fixture: Body, focus: Step[][] = []) => {
  const all = pathsOf(fixture);
  const pick = (paths: Step[][]) => {
    const focused = paths.filter((path) => focus.some((top) => top.every((step, i) => path[i] === step)));
    return focused.length
      ? fc.oneof(fc.constantFrom(...paths), fc.constantFrom(...focused))
      : fc.constantFrom(...paths);
  };
  const containers = all.filter((path) => {
    const node = nodeAt(fixture, path);
    return isObject(node) || Array.isArray(node);
  });
  const objects = containers.filter((path) => isObject(nodeAt(fixture, path)));
  return {
    any: pick(all),
    containers: pick(containers),
    objects: pick(objects),
    members: all.length > 1 ? pick(all.slice(1)) : undefined,
    arrays: all.filter((path) => Array.isArray(nodeAt(fixture, path))),
  };
};

export const replaceAt = (path: Step[], value: Body): Mutation => ({
  label: `set ${pointer(path)} to ${label(value)}`,
  apply: (body) => update(body, path, () => value),
});

export const removeAt = (path: Step[]): Mutation => ({
  label: `remove ${pointer(path)}`,
  apply: (body) => update(body, path, () => REMOVE),
});

export const addAt = (path: Step[], name: string, value: Body): Mutation => ({
  label: `add ${JSON.stringify(name)}: ${label(value)} to ${pointer(path)}`,
  apply: (body) =>
    update(body, path, (node) =>
      Array.isArray(node) ? [...node, value] : withMember(isObject(node) ? node : {}, name, value),
    ),
});

export type NestingShape = 'arrays' | 'objects' | '__proto__ objects';

export const nested = (depth: number, shape: NestingShape, inner: string): string => {
  if (shape === 'arrays') return `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
  const open = shape === 'objects' ? '{"a":' : '{"__proto__":';
  return `${open.repeat(depth)}${inner}${'}'.repeat(depth)}`;
};

export const nestAt = (path: Step[], depth: number, shape: NestingShape): Mutation => ({
  label: `nest ${pointer(path)} ${depth} levels deep in ${shape}`,
  apply: (body) =>
    update(body, path, (node) => new RawJson(nested(depth, shape, jsonText(node)), `${depth} levels of ${shape}`)),
});

/** A body made of mutations of a fixture; prints as the list of mutations. */
export class BodyCase {
  readonly body: Body;
  constructor(
    fixture: Body,
    readonly mutations: Mutation[],
  ) {
    this.body = mutations.reduce((body, mutation) => mutation.apply(body), fixture);
  }
  [fc.toStringMethod]() {
    return this.mutations.map((mutation) => mutation.label).join('; ');
  }
}

/* ------------------------------------------------------------------------------------------------
 * Hostile values.
 */

const oddCharacter = fc.constantFrom(
  ...['\u0000', '\u0001', '\u0007', '\b', '\t', '\n', '\r', '\u000b', '\u001b', '\u001f', '\u007f', '\u0085'],
  ...['\u00a0', '\u2028', '\u2029', '\u202e', '\u200b', '\ufeff', '\ufffe', '\uffff', '\ud800', '\udbff'],
  ...['\udc00', '\udfff', '"', '\\', '/', '<', '%', '$', '{', 'é', 'ß', '😀', 'a', '#', '..'],
);

/** Control characters, NUL, lone surrogates, bidi overrides, quotes. */
export const oddString = fc.string({ unit: oddCharacter, minLength: 1, maxLength: 12 });

/** Long strings start with a marker, so an echo of one is found in any answer. */
export const longString = (length: number) => {
  const marker = `hostile-echo-${length}-`;
  return marker + 'x'.repeat(Math.max(0, length - marker.length));
};

export const hugeString = fc.constantFrom(101, 1_000, 60_000, 300_000).map(longString);

const WRONG_TYPES: Body[] = [null, true, false, 0, -1, 1.5, '', ' ', 'x', '0', 'null', 'true', [], {}, [null], [[]]];
export const wrongType = fc.constantFrom(...WRONG_TYPES);

const NUMBER_LITERALS = [
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '0.0',
  '1E+2',
  '0.1e1',
  '4e-324',
  '2e-324',
  '1.7976931348623159e308',
  '9007199254740993',
  '-9007199254740993',
  '12345678901234567890123456789012345678901',
  '-12345678901234567890123456789012345678901',
  '123456789012345678901234567890.123456789',
  '1.000000000000000000001',
];

/** Numbers a double cannot hold (beyond its range or precision) and ordinary ones written oddly. */
export const hostileNumber = fc
  .oneof(
    fc.constantFrom(...NUMBER_LITERALS),
    fc.bigInt({ min: -(10n ** 41n), max: 10n ** 41n }).map(String),
    fc
      .tuple(fc.integer({ min: -999_999, max: 999_999 }), fc.nat({ max: 999_999 }), fc.integer({ min: -400, max: 400 }))
      .map(([whole, fraction, exponent]) => `${whole}.${fraction}e${exponent}`),
  )
  .map((text) => new RawJson(text, text));

export const prototypeKey = fc.oneof(
  { arbitrary: fc.constant('__proto__'), weight: 4 },
  { arbitrary: fc.constantFrom('constructor', 'prototype'), weight: 2 },
  {
    arbitrary: fc.constantFrom('toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf'),
    weight: 1,
  },
);

/** What a prototype-named member carries: the classic payloads, and plain values a merge would lose. */
const prototypePayload = fc.oneof(
  { arbitrary: wrongType, weight: 2 },
  { arbitrary: oddString, weight: 1 },
  { arbitrary: fc.constantFrom<Body>({ polluted: true }, { quantity: 999 }, { toString: 'x' }), weight: 2 },
);

/** A prototype-named member's value, itself under up to two more prototype names. */
export const prototypeValue: fc.Arbitrary<Body> = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constant<string[]>([]), weight: 2 },
      { arbitrary: fc.array(prototypeKey, { minLength: 1, maxLength: 2 }), weight: 1 },
    ),
    prototypePayload,
  )
  .map(([names, leaf]) => names.reduce<Body>((inner, name) => withMember({}, name, inner), leaf));

export const NESTING_DEPTHS = [33, 40, 100, 1_000, 10_000];
export const nestingShape = fc.constantFrom<NestingShape>('arrays', 'objects', '__proto__ objects');

export const deepValue = fc
  .tuple(fc.constantFrom(...NESTING_DEPTHS), nestingShape)
  .map(([depth, shape]) => new RawJson(nested(depth, shape, '1'), `${depth} levels of ${shape}`));

const arrayItem = fc.constantFrom<Body>({ roleCode: 1 }, {}, 'x', null, new RawJson('1e400', '1e400'), []);
export const hugeArray = fc
  .tuple(fc.constantFrom(100, 1_000), arrayItem)
  .map(([length, item]) => Array.from({ length }, () => item));

export const hostileValue: fc.Arbitrary<Body> = fc.oneof(
  { arbitrary: wrongType, weight: 4 },
  { arbitrary: oddString, weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 24 }), weight: 2 },
  { arbitrary: hugeString, weight: 1 },
  { arbitrary: hugeArray, weight: 1 },
  { arbitrary: deepValue, weight: 1 },
  { arbitrary: hostileNumber as fc.Arbitrary<Body>, weight: 2 },
  { arbitrary: prototypeValue, weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Body>, weight: 2 },
);

export const memberName = fc.oneof(
  prototypeKey,
  fc.string({ unit: 'binary', maxLength: 16 }),
  fc.constantFrom('', ' ', 'externalId', 'authorization', 'version', 'createdAt', 'id'),
);

/** One to three mutations of any kind at any path of the fixture. */
export const mutatedBody = (fixture: Body, focus: Step[][] = []) => {
  const places = placesOf(fixture, focus);
  const removals = places.members ? [{ arbitrary: places.members.map(removeAt), weight: 2 }] : [];
  const mutation = fc.oneof(
    ...removals,
    { arbitrary: fc.tuple(places.any, hostileValue).map(([path, value]) => replaceAt(path, value)), weight: 5 },
    {
      arbitrary: fc
        .tuple(places.containers, memberName, hostileValue)
        .map(([path, name, value]) => addAt(path, name, value)),
      weight: 3,
    },
    {
      arbitrary: fc
        .tuple(places.any, fc.constantFrom(...NESTING_DEPTHS), nestingShape)
        .map(([path, depth, shape]) => nestAt(path, depth, shape)),
      weight: 1,
    },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 }).map((mutations) => new BodyCase(fixture, mutations));
};

/** A hostile number in place of any value, or as a new member of any object or array. */
export const bodyWithNumber = (fixture: Body, focus: Step[][] = []) => {
  const places = placesOf(fixture, focus);
  return fc
    .oneof(
      fc.tuple(places.any, hostileNumber).map(([path, value]) => replaceAt(path, value)),
      fc.tuple(places.containers, hostileNumber).map(([path, value]) => addAt(path, 'n', value)),
    )
    .map((mutation) => new BodyCase(fixture, [mutation]));
};

/** `__proto__`, `constructor` or `prototype` as a member of any object, at any depth. */
export const bodyWithPrototypeKey = (fixture: Body, focus: Step[][] = []) =>
  fc
    .tuple(placesOf(fixture, focus).objects, prototypeKey, prototypeValue)
    .map(([path, name, value]) => new BodyCase(fixture, [addAt(path, name, value)]));

export const deeplyNestedBody = (fixture: Body, focus: Step[][] = []) =>
  fc
    .tuple(placesOf(fixture, focus).any, fc.constantFrom(...NESTING_DEPTHS), nestingShape)
    .map(([path, depth, shape]) => new BodyCase(fixture, [nestAt(path, depth, shape)]));

/** Thousands of schema errors in one body: invalid array items, or unknown members. */
export const MANY_ERRORS_COUNTS = [2_000, 6_000];

/** The largest of them, tried first: invalid items in the fixture's first array. */
export const mostErrors = (fixture: Body): BodyCase[] => {
  const [array] = placesOf(fixture).arrays;
  const count = MANY_ERRORS_COUNTS.at(-1)!;
  return array
    ? [
        new BodyCase(fixture, [
          replaceAt(
            array,
            Array.from({ length: count }, () => ({ roleCode: 1 })),
          ),
        ]),
      ]
    : [];
};
export const bodyWithManyErrors = (fixture: Body) => {
  const arrays = placesOf(fixture).arrays;
  const places = arrays.length ? arrays : [['hostileList']];
  return fc
    .tuple(
      fc.constantFrom(...MANY_ERRORS_COUNTS),
      fc.constantFrom('invalid items', 'empty objects', 'unknown members'),
      fc.constantFrom(...places),
    )
    .map(([count, kind, path]) => {
      if (kind === 'unknown members') {
        const members: { [name: string]: Body } = {};
        for (let i = 0; i < count; i++) members[`unknown${i}`] = i;
        return new BodyCase(fixture, [
          { label: `add ${count} unknown members to /`, apply: (body) => ({ ...(body as object), ...members }) },
        ]);
      }
      // Each item breaks a type and the "npi or a name" rule: two errors, one of them a combinator's.
      const item: Body = kind === 'invalid items' ? { roleCode: 1 } : {};
      return new BodyCase(fixture, [
        replaceAt(
          path,
          Array.from({ length: count }, () => item),
        ),
      ]);
    });
};

/* ------------------------------------------------------------------------------------------------
 * Raw bytes: invalid UTF-8, raw control characters, truncation, other encodings.
 */

export const INVALID_UTF8: Record<string, number[]> = {
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

export class BytesCase {
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

export const LONG_ID_LENGTHS = [64, 65, 1_000, 8_000];

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
 * The world the cases run in, and each route's part in it.
 */

/** Ids of the data the suite creates: `play` may be written by valid cases, `sentinel` never. */
export interface World {
  apiKey: string;
  clientUserId: string;
  play: { request: string; attachment: string; account: string };
  sentinel: { request: string; attachment: string; account: string };
}

/** Ids a case may create; fresh for every execution, so a valid write never lands on existing data. */
export interface CaseIds {
  fresh: string;
  uuid: string;
}
export const caseIds = (): CaseIds => ({ fresh: uniqueId('hx'), uuid: randomUUID() });

export type Stores = 'request' | 'request-patch' | 'portal-account';

export interface RouteTarget {
  route: Route;
  name: string;
  variables: string[];
  /** Path with every variable filled in; `segments` replace a variable's (already encoded) segment. */
  path(ids: CaseIds, segments?: Record<string, string>): string;
  /** A valid body whose `ID` is replaced by `idOf(ids)` when sent; undefined for routes without a body. */
  fixture?: Body;
  idOf(ids: CaseIds): string;
  /** Media types the route accepts for its body (lower case, no parameters). */
  mediaTypes: string[];
  /** What a 2xx stores, to read back. */
  stores?: Stores;
  /** Members of the fixture stored as sent (see placesOf). */
  freeForm: Step[][];
  /** The sentinel's id for each variable, for traversal aimed at it. */
  sentinelOf(variable: string): string;
}

export const SECRET_PASSWORD = `hostile-Pa55word-${'s'.repeat(16)}`;

const accountFixture = (clientUserId: string): Body => ({
  externalId: ID,
  clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01', 'SBX02'],
  displayName: 'Hostile – main office',
  username: 'hostile@clinic.example',
  password: SECRET_PASSWORD,
  totpSecret: 'JBSWY3DPEHPK3PXP',
});

const requestFixture = (): Body => validRequest(ID) as unknown as Body;

/** Objects at several levels: a merge patch recurses into each. */
const patchFixture: Body = {
  quantity: 2,
  patient: { firstName: 'Bea', Payer: 'Other Plan' },
  subscriber: { firstName: 'Bea' },
  requestingProvider: { lastName: 'Doe' },
  renderingProviders: [{ roleCode: 'SJ', organizationName: 'Other Imaging' }],
  diagnoses: [{ qualifierCode: 'ABK', code: 'M54.4' }],
  procedures: [{ qualifierCode: 'HC', code: '72148', quantity: 2, note: 'hostile' }],
  serviceLevelCode: null,
};

/** The spec does not validate procedures: whatever is sent there is stored, and must read back unchanged. */
const UNVALIDATED: Step[][] = [['procedures']];

const declarationFixture: Body = {
  fileName: 'scan.pdf',
  contentType: 'application/pdf',
  size: 4096,
  sha256: 'ab'.repeat(32),
  documentType: 'Imaging',
  description: 'Hostile input',
};

const JSON_ONLY = ['application/json'];

interface Role {
  /** Values of path variables other than the suite's play data. */
  ids?: Record<string, (ids: CaseIds) => string>;
  fixture?: Body;
  /** Members stored as sent: where hostile values are put half the time. */
  freeForm?: Step[][];
  stores?: Stores;
  mediaTypes?: string[];
}

/** What each handler needs; a route whose handler is not listed still gets every case, with generic values. */
const roleOf = (route: Route, world: World): Role => {
  switch (route.handler) {
    case 'requests/create-request':
      return { fixture: requestFixture(), freeForm: UNVALIDATED, stores: 'request' };
    case 'requests/upsert-request-v1':
      return {
        ids: { appointmentId: (ids: CaseIds) => ids.fresh },
        fixture: requestFixture(),
        freeForm: UNVALIDATED,
        stores: 'request',
      };
    case 'requests/replace-request':
      return { fixture: requestFixture(), freeForm: UNVALIDATED, stores: 'request' };
    case 'requests/patch-request-v1':
      // No focus: a merge patch applies its members through every object, validated or not.
      return {
        fixture: patchFixture,
        stores: 'request-patch',
        mediaTypes: [...JSON_ONLY, 'application/merge-patch+json'],
      };
    case 'attachments/create-attachment':
      return { fixture: declarationFixture, mediaTypes: [...JSON_ONLY, 'multipart/form-data'] };
    case 'attachments/delete-attachment':
      return { ids: { attachmentId: (ids: CaseIds) => ids.uuid } };
    case 'webhooks/rotate-webhook-secret':
    case 'webhooks/test-webhook':
    case 'webhooks/redeliver-webhook-delivery':
      // Actions on a subscription that take no body: whatever is sent is ignored (docs/webhooks.md), so
      // no media type is refused; ids of ours, so a case reaches the handler (another client's: 404).
      return { ids: { webhookId: (ids: CaseIds) => ids.uuid, deliveryId: (ids: CaseIds) => ids.uuid }, mediaTypes: [] };
    case 'portal-accounts/create-portal-account':
      return { fixture: accountFixture(world.clientUserId), stores: 'portal-account' };
    case 'portal-accounts/replace-portal-account':
      return { fixture: accountFixture(world.clientUserId), stores: 'portal-account' };
    case 'portal-accounts/delete-portal-account':
      return { ids: { externalId: (ids: CaseIds) => ids.fresh } };
    case 'portal-accounts/list-portal-accounts':
      return { ids: { externalId: () => encodeURIComponent(world.clientUserId) } };
    case 'portal-accounts/filter-portal-accounts':
      return {
        fixture: {
          clientUserId: world.clientUserId,
          portalId: 'sandbox',
          status: 'active',
          search: 'clinic',
          pageSize: 10,
        },
      };
    case 'schemas/validate-payload':
      return { fixture: requestFixture() };
    default:
      return {};
  }
};

/** Defaults for variables by where they stand: the suite's own (play) data. */
const playValue = (route: Route, variable: string, world: World): string => {
  if (variable === 'name') return 'Request';
  if (variable === 'attachmentId') return world.play.attachment;
  if (route.path.includes('/Portals/')) return world.play.account;
  if (route.path.includes('/Requests/')) return world.play.request;
  return 'hostile-generic';
};

const sentinelValue = (route: Route, variable: string, world: World): string => {
  if (variable === 'attachmentId') return world.sentinel.attachment;
  if (route.path.includes('/Portals/')) return world.sentinel.account;
  return world.sentinel.request;
};

export const targetOf = (route: Route, world: World): RouteTarget => {
  const role = roleOf(route, world);
  const variables = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const valueFor = (variable: string, ids: CaseIds) => role.ids?.[variable]?.(ids) ?? playValue(route, variable, world);
  const idVariable = variables.find((variable) => variable !== 'name' && variable !== 'attachmentId');
  const takesBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  return {
    route,
    name: `${route.method} ${route.path.replace(/^\/api\/external/, '')}`,
    variables,
    path: (ids, segments = {}) =>
      route.path.replace(/\{(\w+)\}/g, (_, variable: string) => segments[variable] ?? valueFor(variable, ids)),
    fixture: role.fixture ?? (takesBody ? {} : undefined),
    idOf: (ids) => (idVariable && route.method !== 'POST' ? decodeURIComponent(valueFor(idVariable, ids)) : ids.fresh),
    mediaTypes: takesBody ? (role.mediaTypes ?? JSON_ONLY) : [],
    freeForm: role.freeForm ?? [],
    ...(role.stores ? { stores: role.stores } : {}),
    sentinelOf: (variable) => sentinelValue(route, variable, world),
  };
};
