import { attachments } from '#lib/attachments/service';
import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { attachmentIdOf, requestExternalIdOf } from '#lib/http/path';
import { baseHeaders } from '#lib/http/response';

/**
 * GET /api/external/v1.1/Requests/{requestExternalId}/Attachments/{attachmentId}/download:
 * 303 See Other to a presigned S3 GET (60 s) that serves the exact bytes, whatever their size
 * (a Lambda response could carry at most ~4.5 MB of a file). 409 while pending or rejected.
 */
export const handler = endpoint(async (event) => {
  const download = await attachments.download(clientIdOf(event), requestExternalIdOf(event), attachmentIdOf(event));
  return { statusCode: 303, headers: { ...baseHeaders, Location: download.url }, body: '' };
});
