/**
 * JSON request bodies, parsed with two limits that the rest of the code relies on (docs/validation.md):
 * - arrays and objects nest at most MAX_JSON_DEPTH levels, so no recursive code (merge patch,
 *   JSON.stringify, stores) can run out of stack;
 * - every number survives the IEEE 754 double it is parsed into: its value, read back, is the value
 *   sent (1e400 would become null, a 41-digit integer would lose digits, 1e-400 would become 0).
 * Both are checked by one linear, non-recursive scan of the text after JSON.parse (itself iterative
 * in V8) accepted it, so the scan only ever sees valid JSON.
 */
export const MAX_JSON_DEPTH = 32;

/** A refusal whose message and details are safe to echo: positions only, never the text. */
export class JsonBodyRefused extends Error {
  constructor(
    message: string,
    readonly details: { position?: number; maxDepth?: number } = {},
  ) {
    super(message);
    this.name = 'JsonBodyRefused';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/** Characters a JSON number can be made of: digits, `-`, `+`, `.`, `e`, `E`. */
const isNumberCharacter = (c: number) =>
  (c >= ZERO && c <= NINE) || c === MINUS || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;

/** The position of the quote that closes the string opened at `start` (the text is valid JSON). */
const endOfString = (text: string, start: number): number => {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
};

/** The decimal value of a number, written one way only: 1.50e3, 1500 and 1.5E+3 are all `15e2`. */
const decimalOf = (number: string): string => {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(number);
  if (!match) return number;
  const [, sign, integer, fraction = '', exponent = '0'] = match;
  const digits = integer! + fraction;
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === ZERO) first++;
  if (first === digits.length) return '0';
  let last = digits.length;
  while (digits.charCodeAt(last - 1) === ZERO) last--;
  // Huge exponents lose precision here, but then the double is 0 or Infinity and the check fails anyway.
  const power = Number(exponent) - fraction.length + (digits.length - last);
  return `${sign}${digits.slice(first, last)}e${power}`;
};

/** True when the double JSON.parse makes of this number has exactly the value written. */
export const isExactNumber = (number: string): boolean => {
  const value = Number(number);
  if (!Number.isFinite(value)) return false;
  // JavaScript writes a double with the fewest digits that read back as it: compare the values.
  const written = String(value);
  return written === number || decimalOf(written) === decimalOf(number);
};

const tooDeep = (position: number) =>
  new JsonBodyRefused(
    `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep (at position ${position}).`,
    { position, maxDepth: MAX_JSON_DEPTH },
  );

const inexactNumber = (position: number) =>
  new JsonBodyRefused(
    `The request body has a number that cannot be stored exactly as sent (at position ${position}). ` +
      'Numbers must read back with the value sent, as IEEE 754 doubles: finite, and no more precise than a double ' +
      '(integers up to 9007199254740991 and decimals of up to 15 significant digits are safe); send others as strings.',
    { position },
  );

/** Throws JsonBodyRefused at the first place the (valid) JSON text nests too deep or has an inexact number. */
const checkJsonLimits = (text: string): void => {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = endOfString(text, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) throw tooDeep(i);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      let end = i + 1;
      let exponent = false;
      while (end < text.length) {
        const d = text.charCodeAt(end);
        if (!isNumberCharacter(d)) break;
        if (d === 0x65 || d === 0x45) exponent = true;
        end++;
      }
      // Up to 15 characters without an exponent: at most 15 digits, at least 1e-14, always exact.
      if ((exponent || end - i > 15) && !isExactNumber(text.slice(i, end))) throw inexactNumber(i);
      i = end - 1;
    }
  }
};

/** JSON.parse with the limits above; every failure is a JsonBodyRefused. */
export const parseJsonBody = (text: string): unknown => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // The parser's message quotes the input; only the position is safe to echo back.
    const position = /position (\d+)/.exec(String((error as Error).message))?.[1];
    throw new JsonBodyRefused(
      `The request body is not valid JSON${position ? ` (error at position ${position})` : ''}.`,
      position ? { position: Number(position) } : {},
    );
  }
  checkJsonLimits(text);
  return value;
};
