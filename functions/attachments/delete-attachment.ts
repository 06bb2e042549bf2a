import { attachments } from '#lib/attachments/service';
import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { attachmentIdOf, requestExternalIdOf } from '#lib/http/path';
import { noContent } from '#lib/http/response';

/** DELETE /api/external/v1.1/Requests/{requestExternalId}/Attachments/{attachmentId}: file (every version) and metadata, for good. */
export const handler = endpoint(async (event) => {
  await attachments.remove(clientIdOf(event), requestExternalIdOf(event), attachmentIdOf(event));
  return noContent();
});
