/**
 * Build step (scripts/compile-schemas.ts): bounds how many errors the compiled validators collect.
 *
 * ajv has no maxErrors option, and with allErrors it builds an error object for every failed check:
 * 250 KB of `{}` in an array of providers is 400,000 objects (~300 ms, ~80 MB). The rewritten code
 * still runs every check (the verdict and ajv's own bookkeeping are untouched: `errors` counts every
 * error), but builds error objects only while fewer than a bound (MAX_COLLECTED_ERRORS) are pending; past
 * that it only counts, in `validate.uncollectedErrors`, the errors a text would have reported.
 *
 * The standalone code is regular: each error is `const errN = {…};` followed by one fixed push
 * sequence, and anyOf/oneOf undo their branches' errors with `vErrors.length = _errsN`. The rewrite
 * fails the build when the code no longer has that shape (e.g. after an ajv upgrade).
 */
const PUSH =
  /const (err\d+) = (\{.*?\});if\(vErrors === null\)\{vErrors = \[\1\];\}else \{vErrors\.push\(\1\);\}errors\+\+;/g;
const START = 'let vErrors = null;let errors = 0;';
const END = /(validate\d+)\.errors = vErrors;return errors === 0;/g;
const UNDO = /vErrors\.length = (_errs\d+);/g;

/** Keywords whose branch errors ajv removes again (the branch passed) or reports through one error of their own. */
const UNDONE_OR_SUMMARISED = new Set(['anyOf', 'oneOf', 'not', 'if', 'contains']);
/** Keywords followed by a property name (not a keyword) in a schema path. */
const NAMING = new Set([
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependencies',
  'dependentSchemas',
  'dependentRequired',
]);

/** True when an error at this schema path is inside a branch of anyOf, oneOf, not, if or contains. */
export const isInsideBranch = (schemaPath: string): boolean => {
  const nodes = schemaPath.split('/').slice(1);
  for (let i = 0; i < nodes.length - 1; i++) {
    if (NAMING.has(nodes[i]!)) i++;
    else if (UNDONE_OR_SUMMARISED.has(nodes[i]!)) return true;
  }
  return false;
};

const stringField = (literal: string, name: string): string => {
  const matches = [...literal.matchAll(new RegExp(`[{,]${name}:("(?:[^"\\\\]|\\\\.)*")`, 'g'))];
  if (matches.length !== 1) throw new Error(`Unexpected ajv error object (${name}): ${literal.slice(0, 200)}`);
  return JSON.parse(matches[0]![1]!) as string;
};

/**
 * Rewrites ajv standalone code (allErrors, verbose) so that it builds error objects only while fewer
 * than `maxCollected` (a JS expression) errors are pending.
 */
export const boundErrorCollection = (code: string, maxCollected: string): string => {
  if (/\.errors\)|vErrors\.concat/.test(code)) {
    throw new Error('Compiled validators call each other: bounding their errors needs one function per schema');
  }
  let sites = 0;
  let rewritten = code.replace(PUSH, (_match, name: string, literal: string) => {
    sites++;
    const schemaPath = stringField(literal, 'schemaPath');
    const keyword = stringField(literal, 'keyword');
    const push = `const ${name} = ${literal};if(vErrors === null){vErrors = [${name}];}else {vErrors.push(${name});}`;
    // An anyOf/oneOf error is kept when its branch errors were, so that the texts can fold them into it.
    const collect =
      keyword === 'anyOf' || keyword === 'oneOf'
        ? `errors < ${maxCollected} || (vErrors !== null && vErrors[vErrors.length - 1].schemaPath.startsWith(${JSON.stringify(`${schemaPath}/`)}))`
        : `errors < ${maxCollected}`;
    const count = isInsideBranch(schemaPath) ? '' : 'else {uncollectedErrors++;}';
    return `if(${collect}){${push}}${count}errors++;`;
  });
  const pushes = code.match(/vErrors\.push\(/g)?.length ?? 0;
  const starts = code.split(START).length - 1;
  const ends = [...code.matchAll(END)].length;
  if (sites === 0 || sites !== pushes || starts !== ends) {
    throw new Error(
      `Unexpected ajv standalone code: ${sites} error sites, ${pushes} pushes, ${starts}/${ends} functions`,
    );
  }
  rewritten = rewritten
    .replaceAll(START, `${START}let uncollectedErrors = 0;`)
    .replace(END, '$1.errors = vErrors;$1.uncollectedErrors = uncollectedErrors;return errors === 0;')
    // Fewer objects than errors may be pending: undoing a branch never lengthens the list.
    .replace(UNDO, 'if(vErrors.length > $1){vErrors.length = $1;}');
  return rewritten;
};
