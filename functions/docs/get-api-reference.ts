import { endpoint } from '#lib/http/endpoint';
import { baseHeaders } from '#lib/http/response';
import { API_REFERENCE_CSP, apiReferencePage } from '#lib/openapi/api-reference-page';

const page = apiReferencePage();

/** GET /api/external/docs: the API reference page (renders openapi.json; works offline). Public. */
export const handler = endpoint(async () => ({
  statusCode: 200,
  headers: {
    ...baseHeaders,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': API_REFERENCE_CSP,
    'Referrer-Policy': 'no-referrer',
  },
  body: page,
}));
