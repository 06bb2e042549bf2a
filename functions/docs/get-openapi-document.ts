import { endpoint } from '#lib/http/endpoint';
import { absoluteUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { readRouteAsset } from '#lib/openapi/route-assets';
import { OPENAPI_DOCUMENT } from '#lib/routes/route-table';

// Generated at build time (docs/openapi.md) and shipped beside the bundle: ~135 KB kept out of it.
const openApiDocument = JSON.parse(readRouteAsset(OPENAPI_DOCUMENT)) as Record<string, unknown>;

/**
 * GET /api/external/openapi.json: the OpenAPI 3.1 document, generated from the route table and the
 * JSON Schemas. Public. Its server is this API as the caller reached it (a stage prefix included),
 * so "try it" calls go to the right place.
 */
export const handler = endpoint(async (event) =>
  json(200, { ...openApiDocument, servers: [{ url: absoluteUrl(event, '') }] }),
);
