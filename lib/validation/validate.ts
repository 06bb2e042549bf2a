import type { ErrorObject } from 'ajv';
import { ValidationFailed } from '#lib/errors';
import { toErrorTexts } from './error-text.ts';
import * as validators from './generated/validators.ts';
import type { SchemaName } from './schema-names.ts';

export type { SchemaName } from './schema-names.ts';

/** The spec's Validation result. */
export interface ValidationResult {
  succeeded: boolean;
  errors: string[];
  type: 'none';
}

/** `uncollectedErrors`: errors counted but not built once the bound was reached (error-bound.ts). */
type CompiledValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null; uncollectedErrors?: number };

/** Validators were compiled at build time (ajv standalone): nothing is compiled on a cold start. */
const compiled = validators as unknown as Record<SchemaName, CompiledValidator>;

export const validate = (schema: SchemaName, value: unknown): ValidationResult => {
  const validator = compiled[schema];
  if (!validator) throw new Error(`No compiled validator for schema ${schema}; run npm run build:schemas`);
  const succeeded = validator(value);
  if (succeeded) return { succeeded, errors: [], type: 'none' };
  return { succeeded, errors: toErrorTexts(validator.errors, validator.uncollectedErrors), type: 'none' };
};

export const assertValid = (schema: SchemaName, value: unknown): void => {
  const result = validate(schema, value);
  if (!result.succeeded) throw new ValidationFailed(result.errors);
};
