import { endpoint } from '#lib/http/endpoint';
import { absoluteUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { openApiDocument } from '#lib/openapi/generated/openapi-document';

/**
 * GET /api/external/openapi.json: the OpenAPI 3.1 document, generated at build time from the route
 * table and the JSON Schemas (docs/openapi.md). Public. Its server is this API as the caller reached
 * it (a stage prefix included), so "try it" calls go to the right place.
 */
export const handler = endpoint(async (event) =>
  json(200, { ...openApiDocument, servers: [{ url: absoluteUrl(event, '') }] }),
);
