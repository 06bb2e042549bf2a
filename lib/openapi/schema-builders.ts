import { ID_MAX_LENGTH, ID_PATTERN } from '#lib/validation/schemas/common';

/**
 * The few builders every response schema of the document is written with (components.ts,
 * rpa-schemas.ts, webhook-schemas.ts, authorization-history-schemas.ts, lib/events/event-schemas.ts):
 * one spelling of "closed", "nullable", a reference. Build time only.
 */
export type JsonSchema = Record<string, unknown>;
/** A schema's members, one per member of the type it describes: tsc fails when the two part. */
export type Members<T> = Record<keyof T, JsonSchema>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const nullable = (schema: JsonSchema) => ({ anyOf: [schema, { type: 'null' }] });
export const string = (description?: string, more: JsonSchema = {}) => ({
  type: 'string',
  ...more,
  ...(description ? { description } : {}),
});
export const timestamp = (description: string) => string(description, { format: 'date-time' });
export const uuid = (description: string) => string(description, { format: 'uuid' });
/** A client's id (externalId, clientUserId…): the pattern the schemas and path parameters check. */
export const identifier = (description: string) =>
  string(description, { minLength: 1, maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN });

/** Every value of the union T, checked by tsc: a value added to T and not listed here fails it. */
export const everyOf =
  <T extends string>() =>
  <const A extends readonly T[]>(values: A & ([Exclude<T, A[number]>] extends [never] ? unknown : never)) =>
    values;

/** A string that is one of `values`. */
export const oneOf = (values: readonly string[], description?: string) => string(description, { enum: [...values] });

/** A closed object: every member listed, those not in `optional` always present. */
export const closed = (
  title: string,
  description: string,
  properties: JsonSchema,
  optional: readonly string[] = [],
): JsonSchema => ({
  title,
  description,
  type: 'object',
  required: Object.keys(properties).filter((name) => !optional.includes(name)),
  properties,
  additionalProperties: false,
});
