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

/** The value an error may quote: never that of a writeOnly property (passwords, TOTP seeds). */
const quotable = (error: ErrorObject): unknown =>
  (error.parentSchema as { writeOnly?: boolean } | undefined)?.writeOnly === true ? undefined : error.data;

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

/**
 * Errors that name properties of an object are reported once per object, listing every name: missing
 * ones (spec rule 3) and unknown ones. Each group keeps the place of its first error.
 */
const namedPropertyErrors: Record<string, { errorType: string; param: string; lead: string }> = {
  required: { errorType: 'Required', param: 'missingProperty', lead: 'must have required' },
  additionalProperties: {
    errorType: 'AdditionalProperties',
    param: 'additionalProperty',
    lead: 'must NOT have additional',
  },
};

export const toErrorTexts = (errors: ErrorObject[] | null | undefined): string[] => {
  if (!errors?.length) return [];
  // Branches of an anyOf/oneOf are reported through the combinator's own error.
  const combinators = errors
    .filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf')
    .map((e) => `${e.schemaPath}/`);
  const entries: (string | { path: string; keyword: string; names: string[] })[] = [];
  const groups = new Map<string, { path: string; keyword: string; names: string[] }>();

  for (const error of errors) {
    if (combinators.some((prefix) => error.schemaPath.startsWith(prefix))) continue;
    const path = valuePathOf(error.instancePath);
    const named = namedPropertyErrors[error.keyword];
    if (named) {
      const id = `${error.keyword} ${path}`;
      if (!groups.has(id)) {
        groups.set(id, { path, keyword: error.keyword, names: [] });
        entries.push(groups.get(id)!);
      }
      groups.get(id)!.names.push((error.params as Record<string, string>)[named.param]!);
      continue;
    }
    const oneOfNames =
      error.keyword === 'anyOf' || error.keyword === 'oneOf' ? requiredOnlyBranches(error.schema) : undefined;
    entries.push(
      oneOfNames
        ? format(path, 'Required', `must have at least one of the properties ${quoteNames(oneOfNames)}`)
        : format(path, errorTypeOf(error.keyword), error.message ?? 'is invalid', quotable(error)),
    );
  }

  return entries.map((entry) => {
    if (typeof entry === 'string') return entry;
    const { errorType, lead } = namedPropertyErrors[entry.keyword]!;
    const noun = entry.names.length > 1 ? 'properties' : 'property';
    return format(entry.path, errorType, `${lead} ${noun} ${quoteNames(entry.names)}`);
  });
};
