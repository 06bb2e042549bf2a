import { representationOf } from '#lib/attachments/attachment';
import { attachmentService } from '#lib/attachments/attachments';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { attachmentIdOf, requestExternalIdOf } from '#lib/attachments/paths';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';

const attachments = attachmentService({
  requests: dynamoRequestStore,
  store: dynamoAttachmentStore,
  objects: s3ObjectStorage,
});

/** GET /api/external/v1.1/Requests/{requestExternalId}/Attachments/{attachmentId}: the metadata. */
export const handler = endpoint(async (event) => {
  const record = await attachments.get(clientIdOf(event), requestExternalIdOf(event), attachmentIdOf(event));
  return json(200, representationOf(record));
});
