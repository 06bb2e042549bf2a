import { endpoint } from '#lib/http/endpoint';
import { baseHeaders } from '#lib/http/response';
import { readRouteAsset } from '#lib/openapi/route-assets';
import { API_REFERENCE_SCRIPT } from '#lib/routes/route-table';

// Read once per cold start: MBs that stay outside the bundle (the route's `assets`).
const script = readRouteAsset(API_REFERENCE_SCRIPT);

/** GET /api/external/docs/api-reference.js: the reference page's renderer (Scalar, from npm). Public. */
export const handler = endpoint(async () => ({
  statusCode: 200,
  // The house's Cache-Control: no-store too (every response of the API has it; hostile-input tests hold it).
  headers: { ...baseHeaders, 'Content-Type': 'text/javascript; charset=utf-8' },
  body: script,
}));
