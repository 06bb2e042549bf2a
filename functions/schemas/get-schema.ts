import { NotFound } from '#lib/errors';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { servedSchemas } from '#lib/validation/generated/served-schemas';
import { isPublicSchemaName } from '#lib/validation/schema-names';

/** GET /api/external/v1.1/Schemas/{name}: a JSON Schema, with every array's `items` as an array of schemas. */
export const handler = endpoint(async (event) => {
  const name = event.pathParameters?.name ?? '';
  if (!isPublicSchemaName(name)) throw new NotFound(`Schema ${name.slice(0, 64)}`);
  return json(200, servedSchemas[name], { 'Content-Type': 'application/schema+json; charset=utf-8' });
});
