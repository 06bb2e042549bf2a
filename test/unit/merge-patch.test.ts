import { describe, expect, it } from 'vitest';
import { applyMergePatch } from '#lib/requests/merge-patch';

// The examples of RFC 7396, appendix A.
const cases: [unknown, unknown, unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe('applyMergePatch (RFC 7396)', () => {
  it.each(cases)('%j + %j = %j', (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });

  it('makes ordinary members, which the caller may change or delete', () => {
    const result = applyMergePatch({ a: 1 }, { b: { c: 2 } }) as Record<string, Record<string, unknown>>;
    for (const [object, name] of [
      [result, 'b'],
      [result.b!, 'c'],
    ] as const) {
      expect(Object.getOwnPropertyDescriptor(object, name)).toEqual({
        value: object[name],
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  });

  it('does not mutate the target', () => {
    const target = { a: { b: 1 } };
    applyMergePatch(target, { a: { b: 2 } });
    expect(target).toEqual({ a: { b: 1 } });
  });

  // JSON.parse makes `__proto__` an ordinary own member; object literals in a test would not.
  const parsed = (json: string) => JSON.parse(json) as Record<string, unknown>;

  it('treats __proto__ as an ordinary member: never a prototype, never losing members', () => {
    const target = { admissionTypeCode: '3', patient: { firstName: 'Ann' }, quantity: 1 };
    const patch = parsed(
      '{"admissionTypeCode":null,"patient":null,"__proto__":{"patient":{"x":1},"admissionTypeCode":"1"}}',
    );
    const result = applyMergePatch(target, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['quantity', '__proto__']);
    expect(result.patient).toBeUndefined();
    expect(result.admissionTypeCode).toBeUndefined();
    expect(JSON.stringify(result)).toBe('{"quantity":1,"__proto__":{"patient":{"x":1},"admissionTypeCode":"1"}}');
  });

  it('merges into and deletes an existing __proto__ member like any other', () => {
    const target = parsed('{"__proto__":{"a":1,"b":2},"keep":true}');
    expect(JSON.stringify(applyMergePatch(target, parsed('{"__proto__":{"a":null,"c":3}}')))).toBe(
      '{"__proto__":{"b":2,"c":3},"keep":true}',
    );
    const deleted = applyMergePatch(target, parsed('{"__proto__":null}')) as Record<string, unknown>;
    expect(JSON.stringify(deleted)).toBe('{"keep":true}');
    expect(Object.getPrototypeOf(deleted)).toBe(Object.prototype);
    expect(JSON.stringify(target)).toBe('{"__proto__":{"a":1,"b":2},"keep":true}');
  });

  it('treats constructor and prototype as ordinary members, not as what objects inherit', () => {
    const patch = parsed('{"constructor":{"name":"x"},"prototype":{"y":1},"toString":"z"}');
    expect(JSON.stringify(applyMergePatch({}, patch))).toBe(
      '{"constructor":{"name":"x"},"prototype":{"y":1},"toString":"z"}',
    );
    // A nested object merges into nothing (not into the inherited Object function or prototype).
    expect(JSON.stringify(applyMergePatch({}, parsed('{"__proto__":{"hasOwnProperty":1}}')))).toBe(
      '{"__proto__":{"hasOwnProperty":1}}',
    );
    expect(({} as Record<string, unknown>).hasOwnProperty).toBe(Object.prototype.hasOwnProperty);
  });
});
