/**
 * The schema a client reads (since 2025-03-10): every array's `items` is an array of schemas, one
 * per kind of element (`items: S` → `[S]`, `items: {anyOf: [A, B]}` → `[A, B]`). Validation keeps
 * using the original schema, which checks every element. Applied at build time.
 */
type Json = unknown;

const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'definitions', '$defs'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
const SUBSCHEMAS = ['additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];

/** `{anyOf: [A, B]}` alone lists kinds of elements; beside other keywords anyOf is a constraint. */
const isUnionOfKinds = (value: Json): value is { anyOf: Json[] } =>
  value !== null &&
  typeof value === 'object' &&
  Array.isArray((value as Record<string, Json>).anyOf) &&
  Object.keys(value).every((key) => ['anyOf', 'title', 'description'].includes(key));

export const toServedSchema = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(toServedSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Record<string, Json>;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === 'items') {
      const kinds = Array.isArray(value) ? value : isUnionOfKinds(value) ? value.anyOf : [value];
      out.items = kinds.map(toServedSchema);
    } else if (SUBSCHEMA_MAPS.includes(key) && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toServedSchema(sub)]));
    } else if (SUBSCHEMA_LISTS.includes(key) || SUBSCHEMAS.includes(key)) {
      out[key] = toServedSchema(value);
    } else {
      out[key] = value;
    }
  }
  return out;
};
