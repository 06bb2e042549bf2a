import type { ErrorObject } from 'ajv';
import { ValidationFailed } from '#lib/errors';
import { toErrorTexts } from './error-text.ts';

/**
 * A validator compiled at build time (ajv standalone, scripts/compile-schemas.ts): nothing is
 * compiled on a cold start. Each schema's is its own module, lib/validation/generated/per-schema/,
 * so a function bundles only those it imports. `uncollectedErrors`: errors counted but not built
 * once the bound was reached (error-bound.ts).
 */
export type CompiledValidator = ((data: unknown) => boolean) & {
  errors?: ErrorObject[] | null;
  uncollectedErrors?: number;
};

/** The spec's Validation result. */
export interface ValidationResult {
  succeeded: boolean;
  errors: string[];
  type: 'none';
}

export const validationResultOf = (validator: CompiledValidator, value: unknown): ValidationResult => {
  const succeeded = validator(value);
  if (succeeded) return { succeeded, errors: [], type: 'none' };
  return { succeeded, errors: toErrorTexts(validator.errors, validator.uncollectedErrors), type: 'none' };
};

export const assertValid = (validator: CompiledValidator, value: unknown): void => {
  const result = validationResultOf(validator, value);
  if (!result.succeeded) throw new ValidationFailed(result.errors);
};
