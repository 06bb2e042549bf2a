import { representationOf } from '#lib/attachments/attachment';
import { attachments } from '#lib/attachments/service';
import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { requestExternalIdOf } from '#lib/http/path';
import { json } from '#lib/http/response';

/** GET /api/external/v1.1/Requests/{requestExternalId}/Attachments: every attachment of the request, oldest first. */
export const handler = endpoint(async (event) => {
  const records = await attachments.list(clientIdOf(event), requestExternalIdOf(event));
  return json(200, { attachments: records.map(representationOf) });
});
