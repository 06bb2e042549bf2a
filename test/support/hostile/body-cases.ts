import fc from 'fast-check';
import {
  addAt,
  type Body,
  BodyCase,
  type NestingShape,
  nestAt,
  nested,
  placesOf,
  RawJson,
  removeAt,
  replaceAt,
  type Step,
  withMember,
} from './json-body.ts';

/**
 * The hostile values (wrong types, odd strings, huge strings and arrays, numbers a double cannot hold,
 * prototype names, deep nesting) and the body cases built from them for the body families of the table
 * (table.ts): each generator takes a route's valid body and the members it stores as sent.
 */

const oddCharacter = fc.constantFrom(
  ...['\u0000', '\u0001', '\u0007', '\b', '\t', '\n', '\r', '\u000b', '\u001b', '\u001f', '\u007f', '\u0085'],
  ...['\u00a0', '\u2028', '\u2029', '\u202e', '\u200b', '\ufeff', '\ufffe', '\uffff', '\ud800', '\udbff'],
  ...['\udc00', '\udfff', '"', '\\', '/', '<', '%', '$', '{', 'é', 'ß', '😀', 'a', '#', '..'],
);

/** Control characters, NUL, lone surrogates, bidi overrides, quotes. */
const oddString = fc.string({ unit: oddCharacter, minLength: 1, maxLength: 12 });

/** Long strings start with a marker, so an echo of one is found in any answer. */
export const longString = (length: number) => {
  const marker = `hostile-echo-${length}-`;
  return marker + 'x'.repeat(Math.max(0, length - marker.length));
};

const hugeString = fc.constantFrom(101, 1_000, 60_000, 300_000).map(longString);

const WRONG_TYPES: Body[] = [null, true, false, 0, -1, 1.5, '', ' ', 'x', '0', 'null', 'true', [], {}, [null], [[]]];
const wrongType = fc.constantFrom(...WRONG_TYPES);

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
const hostileNumber = fc
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
const prototypeValue: fc.Arbitrary<Body> = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constant<string[]>([]), weight: 2 },
      { arbitrary: fc.array(prototypeKey, { minLength: 1, maxLength: 2 }), weight: 1 },
    ),
    prototypePayload,
  )
  .map(([names, leaf]) => names.reduce<Body>((inner, name) => withMember({}, name, inner), leaf));

const NESTING_DEPTHS = [33, 40, 100, 1_000, 10_000];
const nestingShape = fc.constantFrom<NestingShape>('arrays', 'objects', '__proto__ objects');

const deepValue = fc
  .tuple(fc.constantFrom(...NESTING_DEPTHS), nestingShape)
  .map(([depth, shape]) => new RawJson(nested(depth, shape, '1'), `${depth} levels of ${shape}`));

const arrayItem = fc.constantFrom<Body>({ roleCode: 1 }, {}, 'x', null, new RawJson('1e400', '1e400'), []);
const hugeArray = fc
  .tuple(fc.constantFrom(100, 1_000), arrayItem)
  .map(([length, item]) => Array.from({ length }, () => item));

const hostileValue: fc.Arbitrary<Body> = fc.oneof(
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

const memberName = fc.oneof(
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
const MANY_ERRORS_COUNTS = [2_000, 6_000];

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
