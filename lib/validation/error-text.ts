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
    // A branch is an object or a boolean (Object.keys(true) is []); null is no schema, but costs nothing to refuse.
    const keys = Object.keys(branch ?? {});
    if (keys.length !== 1 || keys[0] !== 'required') return undefined;
    names.push(...(branch as { required: string[] }).required);
  }
  return names;
};

/**
 * Whether a oneOf failed because no branch matched. One that matched several (ajv lists them) is not
 * missing names: its own text says what is wrong.
 */
const matchedNoBranch = (error: ErrorObject) => !(error.params as { passingSchemas?: unknown }).passingSchemas;

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

/** A Validation result shows at most this many texts, then one closing text (closingText). */
export const MAX_ERROR_TEXTS = 100;

/** The text that closes a list cut at MAX_ERROR_TEXTS: `/: MaxErrors error. 15901 more errors were left out.` */
export const closingText = (leftOut: number) =>
  format('/', 'MaxErrors', leftOut === 1 ? '1 more error was left out' : `${leftOut} more errors were left out`);

type Entry = string | { path: string; keyword: string; names: string[] };

/**
 * Branches of an anyOf/oneOf are reported through the combinator's own error: a set of their
 * schema paths, each error checked against its own path's prefixes (linear in the errors).
 */
const combinatorBranches = (errors: ErrorObject[]) => {
  const combinators = new Set<string>();
  for (const e of errors) if (e.keyword === 'anyOf' || e.keyword === 'oneOf') combinators.add(`${e.schemaPath}/`);
  return (schemaPath: string) => {
    if (combinators.size === 0) return false;
    for (let end = schemaPath.indexOf('/'); end !== -1; end = schemaPath.indexOf('/', end + 1)) {
      if (combinators.has(schemaPath.slice(0, end + 1))) return true;
    }
    return false;
  };
};

/**
 * The texts of a failed validation, at most MAX_ERROR_TEXTS of them plus a closing text that counts
 * the errors left out: those of texts not shown, the names a shown Required or AdditionalProperties
 * text could not list, and `uncollected` (errors the validator counted without building them).
 */
export const toErrorTexts = (errors: ErrorObject[] | null | undefined, uncollected = 0): string[] => {
  const all = errors ?? [];
  if (!all.length && !uncollected) return [];
  const isBranch = combinatorBranches(all);
  const entries: Entry[] = [];
  const groups = new Map<string, { path: string; keyword: string; names: string[] }>();
  let leftOut = uncollected;

  for (const error of all) {
    if (isBranch(error.schemaPath)) continue;
    const path = valuePathOf(error.instancePath);
    const named = namedPropertyErrors[error.keyword];
    if (named) {
      const id = `${error.keyword} ${path}`;
      let group = groups.get(id);
      if (!group && entries.length < MAX_ERROR_TEXTS) {
        group = { path, keyword: error.keyword, names: [] };
        groups.set(id, group);
        entries.push(group);
      }
      if (group) group.names.push((error.params as Record<string, string>)[named.param]!);
      else leftOut++;
      continue;
    }
    if (entries.length >= MAX_ERROR_TEXTS) {
      leftOut++;
      continue;
    }
    const oneOfNames =
      error.keyword === 'anyOf' || (error.keyword === 'oneOf' && matchedNoBranch(error))
        ? requiredOnlyBranches(error.schema)
        : undefined;
    entries.push(
      oneOfNames
        ? format(path, 'Required', `must have at least one of the properties ${quoteNames(oneOfNames)}`)
        : format(path, errorTypeOf(error.keyword), error.message ?? 'is invalid', quotable(error)),
    );
  }

  const texts = entries.map((entry) => {
    if (typeof entry === 'string') return entry;
    const { errorType, lead } = namedPropertyErrors[entry.keyword]!;
    const noun = entry.names.length > 1 ? 'properties' : 'property';
    return format(entry.path, errorType, `${lead} ${noun} ${quoteNames(entry.names)}`);
  });
  return leftOut > 0 ? [...texts, closingText(leftOut)] : texts;
};
