import { describe, expect, it } from 'vitest';
import { isExactNumber, JsonBodyRefused, MAX_JSON_DEPTH, parseJsonBody } from '#lib/json/safe-json';

const refusal = (text: string): JsonBodyRefused => {
  try {
    parseJsonBody(text);
  } catch (error) {
    if (error instanceof JsonBodyRefused) return error;
    throw error;
  }
  throw new Error(`accepted: ${text.slice(0, 80)}`);
};

const nested = (depth: number) => `${'{"a":['.repeat(depth / 2)}1${']}'.repeat(depth / 2)}`;

describe('parseJsonBody', () => {
  it('parses JSON as JSON.parse does', () => {
    const text = '{"a":[1,-2.5,"x",true,null,{"b":{}}],"__proto__":{"c":1}}';
    expect(parseJsonBody(text)).toEqual(JSON.parse(text));
    expect(Object.hasOwn(parseJsonBody(text) as object, '__proto__')).toBe(true);
  });

  it('refuses malformed JSON with its position, never quoting it', () => {
    const error = refusal('{"name": "Sensitive-Name" oops');
    expect(error.message).toBe('The request body is not valid JSON (error at position 26).');
    expect(error.details).toEqual({ position: 26 });
  });

  it(`accepts ${MAX_JSON_DEPTH} levels of arrays and objects, and refuses ${MAX_JSON_DEPTH + 1}`, () => {
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonBody(`[${nested(MAX_JSON_DEPTH - 2)}]`)).not.toThrow();
    const error = refusal(`[${nested(MAX_JSON_DEPTH)}]`);
    expect(error.message).toBe(
      `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep (at position 96).`,
    );
    expect(error.details).toEqual({ position: 96, maxDepth: MAX_JSON_DEPTH });
  });

  it('counts brackets in structure only, not in strings (escaped quotes included)', () => {
    const brackets = '[{'.repeat(100);
    expect(parseJsonBody(JSON.stringify({ a: brackets, 'b\\"[': `\\"${brackets}`, c: [[1]] }))).toMatchObject({
      a: brackets,
    });
  });

  it('refuses nesting 8,000 and 128,000 levels deep without recursing', () => {
    const procedures = `{"procedures":${'['.repeat(8000)}${']'.repeat(8000)}}`;
    expect(refusal(procedures).details.position).toBe(14 + MAX_JSON_DEPTH - 1);
    expect(refusal(`${'['.repeat(128_000)}${']'.repeat(128_000)}`).details.position).toBe(MAX_JSON_DEPTH);
  });

  it.each([
    '0',
    '-0',
    '1.5',
    '1e2',
    '1E+2',
    '0.1',
    '0.30000000000000004',
    '123.4500',
    '9007199254740991',
    '-9007199254740991',
    '9007199254740992',
    '1e22',
    '1.7976931348623157e308',
    '5e-324',
    '0.000001',
    '12345678901234.5',
    '0e999999999999999999999',
  ])('accepts %s: its double reads back with the same value', (number) => {
    expect(isExactNumber(number)).toBe(true);
    expect(parseJsonBody(`{"n":[${number}]}`)).toEqual({ n: [Number(number)] });
  });

  it.each([
    '1e400',
    '-1e400',
    '1.7976931348623159e308',
    '1e-400',
    '12345678901234567890123456789012345678901',
    '9007199254740993',
    '-9007199254740993',
    '0.1000000000000000000001',
    '1.00000000000000001',
    `1${'0'.repeat(100_000)}`,
    `0.${'0'.repeat(100_000)}1`,
  ])('refuses %s: its double would not read back the same', (number) => {
    expect(isExactNumber(number)).toBe(false);
    const error = refusal(`{"procedures":[1, ${number}]}`);
    expect(error.message).toMatch(
      /^The request body has a number that cannot be stored exactly as sent \(at position 18\)/,
    );
    expect(error.message).not.toContain(number);
    expect(error.details).toEqual({ position: 18 });
  });

  it('leaves numbers in strings and names alone', () => {
    expect(parseJsonBody('{"1e400":"12345678901234567890123456789012345678901"}')).toEqual({
      '1e400': '12345678901234567890123456789012345678901',
    });
  });
});
