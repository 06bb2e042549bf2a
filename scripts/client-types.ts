/**
 * The TypeScript types of an OpenAPI document, by openapi-typescript, as a client needs them
 * (scripts/generate-client.ts writes them to client/schema.d.ts). A module of its own: typescript takes about a
 * second to import, which generate-client.ts spends only when the types are out of date.
 */
import openapiTS, {
  astToString,
  type OpenAPI3,
  type SchemaObject,
  type TransformNodeOptions,
  transformSchemaObject,
  tsUnion,
  tsWithRequired,
} from 'openapi-typescript';
import ts from 'typescript';

const BLOB = ts.factory.createTypeReferenceNode('Blob');
const NULL = ts.factory.createLiteralTypeNode(ts.factory.createNull());

/**
 * A file's bytes: `contentMediaType` (OpenAPI 3.1) or `format: binary` (3.0) on a string. openapi-typescript
 * types them `string`; a client sends and receives them as a Blob (FormData takes one, not a string).
 */
const isBinary = (schema: SchemaObject) => {
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.includes('string')) return false;
  return schema.format === 'binary' || ('contentMediaType' in schema && schema.contentMediaType !== undefined);
};

const blobOf = (schema: SchemaObject) =>
  Array.isArray(schema.type) && schema.type.includes('null') ? tsUnion([BLOB, NULL]) : BLOB;

const ALTERNATIVES = 'x-required-alternatives';

const isObject = (node: unknown): node is Record<string, unknown> => typeof node === 'object' && node !== null;

/** `{required: [...]}` alone: an alternative that only says which of its parent's properties must be present. */
const requiredOnly = (member: unknown): member is { required: string[] } =>
  isObject(member) && Object.keys(member).length === 1 && Array.isArray(member.required);

/**
 * `anyOf: [{required: ['npi']}, {required: ['lastName']}, …]` on an object (a provider names one of them).
 * openapi-typescript types each such member `unknown`, which swallows the whole type, and its `transform`
 * replaces a schema's own type but not the union it then adds; so such alternatives move to an extension
 * member, in this in-memory copy of the document, for `transform` to type as `WithRequired<Provider, 'npi'> | …`.
 */
const moveRequiredAlternatives = (node: unknown) => {
  if (Array.isArray(node)) {
    for (const item of node) moveRequiredAlternatives(item);
    return;
  }
  if (!isObject(node)) return;
  for (const key of ['anyOf', 'oneOf']) {
    const members = node[key];
    if (!('properties' in node) || !Array.isArray(members) || members.length === 0) continue;
    if (!members.every(requiredOnly)) continue;
    delete node[key];
    node[ALTERNATIVES] = members.map((member) => member.required);
  }
  for (const value of Object.values(node)) moveRequiredAlternatives(value);
};

const requiredAlternatives = (schema: SchemaObject, options: TransformNodeOptions) => {
  const alternatives: string[][] | undefined = schema[ALTERNATIVES];
  if (!alternatives) return undefined;
  const { [ALTERNATIVES]: _, ...object } = schema;
  const base = transformSchemaObject(object, options);
  return tsUnion(alternatives.map((required) => tsWithRequired(base, required, options.ctx.injectFooter)));
};

const transform = (schema: SchemaObject, options: TransformNodeOptions) =>
  isBinary(schema) ? blobOf(schema) : requiredAlternatives(schema, options);

/** The types of the document (its JSON text), as TypeScript source. */
export const clientTypes = async (documentText: string) => {
  const document: OpenAPI3 = JSON.parse(documentText);
  moveRequiredAlternatives(document);
  return astToString(await openapiTS(document, { transform }));
};
