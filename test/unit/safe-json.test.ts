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

/**
 * A case for it.each, named by its number unless that is too long to read. Names of 100,000 characters also
 * break Stryker's vitest runner: it selects tests by one regular expression of their names, too large for V8.
 */
const named = (number: string) => ({
  number,
  name: number.length > 40 ? `${number.slice(0, 8)}… (${number.length} characters)` : number,
});

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

  it('refuses malformed JSON without a position when the parser names none', () => {
    for (const text of ['', ' \n ']) {
      const error = refusal(text);
      expect(error.message).toBe('The request body is not valid JSON.');
      expect(error.details).toEqual({});
    }
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

  it('ends a string at the first quote after an even run of backslashes, and only there', () => {
    const brackets = '['.repeat(MAX_JSON_DEPTH + 8);
    // One escaped quote, then brackets: the string does not end at that quote.
    const escapedQuote = { a: `"${brackets}` };
    expect(parseJsonBody(JSON.stringify(escapedQuote))).toEqual(escapedQuote);
    // An escaped backslash just before the closing quote: the string ends there, and the next one is a string too.
    const endsInBackslash = { a: 'C:\\', b: brackets };
    expect(parseJsonBody(JSON.stringify(endsInBackslash))).toEqual(endsInBackslash);
    // Three backslashes: an escaped backslash and an escaped quote.
    const both = { a: `\\"${brackets}`, b: 'x' };
    expect(parseJsonBody(JSON.stringify(both))).toEqual(both);
  });

  it('counts depth, not brackets: any number of arrays and objects side by side', () => {
    const siblings = `[${Array.from({ length: 500 }, (_, i) => (i % 2 ? '{}' : '[[]]')).join(',')}]`;
    expect(parseJsonBody(siblings)).toHaveLength(500);
    expect(() => parseJsonBody(`{"a":${nested(MAX_JSON_DEPTH - 2)},"b":${nested(MAX_JSON_DEPTH - 2)}}`)).not.toThrow();
  });

  it('refuses nesting 8,000 and 128,000 levels deep without recursing', () => {
    const procedures = `{"procedures":${'['.repeat(8000)}${']'.repeat(8000)}}`;
    expect(refusal(procedures).details.position).toBe(14 + MAX_JSON_DEPTH - 1);
    expect(refusal(`${'['.repeat(128_000)}${']'.repeat(128_000)}`).details.position).toBe(MAX_JSON_DEPTH);
  });

  it.each(
    [
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
      '5e-2',
      '2.50E-3',
      '12345678901234.5',
      '0e999999999999999999999',
    ].map(named),
  )('accepts $name: its double reads back with the same value', ({ number }) => {
    expect(isExactNumber(number)).toBe(true);
    expect(parseJsonBody(`{"n":[${number}]}`)).toEqual({ n: [Number(number)] });
  });

  it.each(
    [
      '1e400',
      '1E400',
      '-1e400',
      '1.5E-400',
      '1.7976931348623159e308',
      '1e-400',
      '12345678901234567890123456789012345678901',
      '9007199254740993',
      '-9007199254740993',
      '0.1000000000000000000001',
      '1.00000000000000001',
      `1${'0'.repeat(100_000)}`,
      `0.${'0'.repeat(100_000)}1`,
    ].map(named),
  )('refuses $name: its double would not read back the same', ({ number }) => {
    expect(isExactNumber(number)).toBe(false);
    const error = refusal(`{"procedures":[1, ${number}]}`);
    expect(error.name).toBe('JsonBodyRefused');
    expect(error.message).toBe(
      'The request body has a number that cannot be stored exactly as sent (at position 18). Numbers must read ' +
        'back with the value sent, as IEEE 754 doubles: finite, and no more precise than a double (integers up ' +
        'to 9007199254740991 and decimals of up to 15 significant digits are safe); send others as strings.',
    );
    expect(error.details).toEqual({ position: 18 });
  });

  it('leaves numbers in strings and names alone', () => {
    expect(parseJsonBody('{"1e400":"12345678901234567890123456789012345678901"}')).toEqual({
      '1e400': '12345678901234567890123456789012345678901',
    });
  });
});
