import { attachmentPath, representationOf } from '#lib/attachments/attachment';
import { attachmentService } from '#lib/attachments/attachments';
import { MAX_DIRECT_BODY_BYTES, MAX_DIRECT_FILE_BYTES } from '#lib/attachments/content-policy';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { requestExternalIdOf } from '#lib/attachments/paths';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { directUploadOf, presignedUploadOf } from '#lib/attachments/upload-input';
import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { MultipartForm } from '#lib/http/multipart';
import { json } from '#lib/http/response';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';

const attachments = attachmentService({
  requests: dynamoRequestStore,
  store: dynamoAttachmentStore,
  objects: s3ObjectStorage,
});

/**
 * POST /api/external/v1.1/Requests/{requestExternalId}/Attachments → 201 and Location, either way:
 * - multipart/form-data (file ≤ 4 MiB in field `file`; documentType, description, sha256 optional):
 *   stored and verified now, `available`;
 * - application/json {fileName, contentType, size ≤ 1 GiB, sha256, documentType?, description?}:
 *   `pending`, with `upload` (a presigned PUT, 15 min); available once the file arrives and matches.
 */
export const handler = endpoint<MultipartForm | unknown>(
  async (event) => {
    const clientId = clientIdOf(event);
    const externalId = requestExternalIdOf(event);
    const { record, upload } =
      event.body instanceof MultipartForm
        ? { record: await attachments.upload(clientId, externalId, directUploadOf(event.body)), upload: undefined }
        : await attachments.requestUpload(clientId, externalId, presignedUploadOf(event.body));
    return json(201, upload ? { ...representationOf(record), upload } : representationOf(record), {
      Location: attachmentPath(externalId, record.attachmentId),
    });
  },
  {
    multipart: { maxBytes: MAX_DIRECT_BODY_BYTES, maxFileBytes: MAX_DIRECT_FILE_BYTES },
    json: { schema: 'PresignedUpload' },
  },
);
