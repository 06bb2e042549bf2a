import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { json, noContent } from '#lib/http/response';
import { etagOf, representationOf } from '#lib/requests/requests';
import { requests } from '#lib/requests/service';

/** GET /api/external/v1.1/Requests/{externalId}: the request with its authorization status. */
export const handler = endpoint(async (event) => {
  const request = await requests.get(clientIdOf(event), pathId(event, 'externalId'));
  const etag = etagOf(request);
  if (header(event, 'if-none-match') === etag) return { ...noContent({ ETag: etag }), statusCode: 304 };
  return json(200, representationOf(request), { ETag: etag });
});
