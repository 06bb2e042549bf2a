import type { ErrorObject } from 'ajv';

/**
 * Turns the validation library's errors into the spec's error texts (Errors section):
 *   {valuePath}: {errorType} error for value "{value}". Message: {message}.
 *   {valuePath}: {errorType} error. {message}.
 * The first form is used when the offending value is a string, number, boolean or null whose text
 * is at most VALUE_IN_ERROR_MAX_CHARS characters; objects, arrays and longer values use the second.
 */
export const VALUE_IN_ERROR_MAX_CHARS = 100;

/** `/` for the root; array positions are nodes; JSON Pointer escapes (~0, ~1) are kept. */
const valuePathOf = (instancePath: string) => (instancePath === '' ? '/' : instancePath);

const errorTypeOf = (keyword: string) => keyword.charAt(0).toUpperCase() + keyword.slice(1);

const quoteNames = (names: string[]) => names.map((name) => `'${name}'`).join(', ');

const valueText = (value: unknown): string | undefined => {
  if (value === null) return 'null';
  if (typeof value === 'string') return value.length <= VALUE_IN_ERROR_MAX_CHARS ? value : undefined;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
};

const format = (path: string, errorType: string, message: string, value?: unknown) => {
  const text = valueText(value);
  return text === undefined
    ? `${path}: ${errorType} error. ${message}.`
    : `${path}: ${errorType} error for value "${text}". Message: ${message}.`;
};

/** True when every branch of a combinator only requires properties: a "one of these names" rule. */
const requiredOnlyBranches = (branches: unknown): string[] | undefined => {
  if (!Array.isArray(branches)) return undefined;
  const names: string[] = [];
  for (const branch of branches) {
    const keys = branch && typeof branch === 'object' ? Object.keys(branch) : [];
    if (keys.length !== 1 || keys[0] !== 'required') return undefined;
    names.push(...(branch as { required: string[] }).required);
  }
  return names;
};

export const toErrorTexts = (errors: ErrorObject[] | null | undefined): string[] => {
  if (!errors?.length) return [];
  const texts: string[] = [];
  // Missing properties are reported once per object, listing every missing name (spec rule 3).
  const missing = new Map<string, string[]>();
  const unknown = new Map<string, string[]>();
  const anyOfPaths = new Map<string, string>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') anyOfPaths.set(error.schemaPath, error.instancePath);
  }
  const insideCombinator = (error: ErrorObject) =>
    [...anyOfPaths.keys()].some((schemaPath) => error.schemaPath.startsWith(`${schemaPath}/`));

  for (const error of errors) {
    if (insideCombinator(error)) continue;
    const path = valuePathOf(error.instancePath);
    switch (error.keyword) {
      case 'required': {
        const names = missing.get(path) ?? [];
        if (!missing.has(path)) {
          missing.set(path, names);
          texts.push(`\u0000required:${path}`);
        }
        names.push((error.params as { missingProperty: string }).missingProperty);
        break;
      }
      case 'additionalProperties': {
        const names = unknown.get(path) ?? [];
        if (!unknown.has(path)) {
          unknown.set(path, names);
          texts.push(`\u0000additional:${path}`);
        }
        names.push((error.params as { additionalProperty: string }).additionalProperty);
        break;
      }
      case 'anyOf':
      case 'oneOf': {
        const names = requiredOnlyBranches(error.schema);
        texts.push(
          names
            ? format(path, 'Required', `must have at least one of the properties ${quoteNames(names)}`)
            : format(path, errorTypeOf(error.keyword), error.message ?? 'is invalid', error.data),
        );
        break;
      }
      default:
        texts.push(format(path, errorTypeOf(error.keyword), error.message ?? 'is invalid', error.data));
    }
  }
  return texts.map((text) => {
    if (text.startsWith('\u0000required:')) {
      const path = text.slice('\u0000required:'.length);
      const names = missing.get(path)!;
      return format(
        path,
        'Required',
        `must have required ${names.length > 1 ? 'properties' : 'property'} ${quoteNames(names)}`,
      );
    }
    if (text.startsWith('\u0000additional:')) {
      const path = text.slice('\u0000additional:'.length);
      const names = unknown.get(path)!;
      return format(
        path,
        'AdditionalProperties',
        `must NOT have additional ${names.length > 1 ? 'properties' : 'property'} ${quoteNames(names)}`,
      );
    }
    return text;
  });
};
