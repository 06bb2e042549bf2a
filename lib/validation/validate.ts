import * as validators from './generated/validators.ts';
import type { SchemaName } from './schema-names.ts';
import { type CompiledValidator, type ValidationResult, validationResultOf } from './validator.ts';

export type { SchemaName } from './schema-names.ts';
export type { ValidationResult } from './validator.ts';

/*
 * Validation by schema name, for what may validate against any schema (the validate endpoint,
 * tests, benches): this module bundles every compiled validator. A route validating one body imports
 * that schema's validator from lib/validation/generated/per-schema/ and uses validator.ts.
 */
const compiled = validators as unknown as Record<SchemaName, CompiledValidator>;

export const validate = (schema: SchemaName, value: unknown): ValidationResult => {
  const validator = compiled[schema];
  if (!validator) throw new Error(`No compiled validator for schema ${schema}; run npm run build:schemas`);
  return validationResultOf(validator, value);
};
