import { clientIdOf } from '#lib/http/api-event';
import { notModified } from '#lib/http/conditional';
import { endpoint } from '#lib/http/endpoint';
import { pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { etagOf, representationOf } from '#lib/requests/request-document';
import { requests } from '#lib/requests/service';

/** GET /api/external/v1.1/Requests/{externalId}: the request with its authorization status. */
export const handler = endpoint(async (event) => {
  const request = await requests.get(clientIdOf(event), pathId(event, 'externalId'));
  const etag = etagOf(request);
  return notModified(event, etag) ?? json(200, representationOf(request), { ETag: etag });
});
