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
