import { representationOf } from '#lib/attachments/attachment';
import { attachments } from '#lib/attachments/service';
import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { attachmentIdOf, requestExternalIdOf } from '#lib/http/path';
import { json } from '#lib/http/response';

/** GET /api/external/v1.1/Requests/{requestExternalId}/Attachments/{attachmentId}: the metadata. */
export const handler = endpoint(async (event) => {
  const record = await attachments.get(clientIdOf(event), requestExternalIdOf(event), attachmentIdOf(event));
  return json(200, representationOf(record));
});
