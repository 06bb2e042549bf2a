import { endpoint } from '#lib/http/endpoint';
import { baseHeaders } from '#lib/http/response';
import { readRouteAsset } from '#lib/openapi/route-assets';
import { API_REFERENCE_SCRIPT } from '#lib/routes';

// Read once per cold start: MBs that stay outside the bundle (the route's `assets`).
const script = readRouteAsset(API_REFERENCE_SCRIPT);

/** GET /api/external/docs/api-reference.js: the reference page's renderer (Scalar, from npm). Public. */
export const handler = endpoint(async () => ({
  statusCode: 200,
  headers: {
    ...baseHeaders,
    'Content-Type': 'text/javascript; charset=utf-8',
    // The same file until the next deployment: browsers may keep it for an hour.
    'Cache-Control': 'public, max-age=3600',
  },
  body: script,
}));
