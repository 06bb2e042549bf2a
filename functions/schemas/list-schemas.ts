import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { PUBLIC_SCHEMAS } from '#lib/validation/schema-names';

/** GET /api/external/v1.1/Schemas: the schemas clients can read and validate against. */
export const handler = endpoint(async () =>
  json(200, {
    schemas: PUBLIC_SCHEMAS.map((name) => ({
      name,
      href: `/api/external/v1.1/Schemas/${name}`,
      validate: `/api/external/v1.1/Schemas/${name}/validate`,
    })),
  }),
);
