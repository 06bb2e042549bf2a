/**
 * Runtime helpers the compiled validators call, in place of ajv's CommonJS ones: one ESM module
 * behaves the same under Node, Vitest and esbuild, where CommonJS default-import interop does not.
 */

/** String length in Unicode code points, as JSON Schema's minLength/maxLength count it. */
export const ucs2length = (value: string): number => {
  let length = 0;
  for (const _ of value) length++;
  return length;
};

/**
 * The compiled validators build error objects for at most this many pending errors; past it they
 * only count (lib/validation/error-bound.ts). Enough for the 100 texts a result shows.
 */
export const MAX_COLLECTED_ERRORS = 1000;
