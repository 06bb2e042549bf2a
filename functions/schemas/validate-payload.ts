import { NotFound } from '#lib/errors';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { isPublicSchemaName } from '#lib/validation/schema-names';
import { validate } from '#lib/validation/validate';

/** POST /api/external/v1.1/Schemas/{name}/validate: the Validation result for any JSON payload, always 200. */
export const handler = endpoint<unknown>(
  async (event) => {
    const name = event.pathParameters?.name ?? '';
    if (!isPublicSchemaName(name)) throw new NotFound(`Schema ${name.slice(0, 64)}`);
    return json(200, validate(name, event.body));
  },
  { json: {} },
);
