import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { etagOf, type RequestDocument, representationOf } from '#lib/requests/request-document';
import { requests } from '#lib/requests/service';
import { requestAddressedByPathValidator } from '#lib/validation/generated/per-schema/request-addressed-by-path';

/** PUT /api/external/v1.1/Requests/{externalId}: replaces an existing request; 404 when missing. */
export const handler = endpoint<RequestDocument>(
  async (event) => {
    const externalId = pathId(event, 'externalId');
    const { request } = await requests.replace(clientIdOf(event), externalId, event.body, header(event, 'if-match'));
    return json(200, representationOf(request), { ETag: etagOf(request) });
  },
  { json: { validator: requestAddressedByPathValidator } },
);
