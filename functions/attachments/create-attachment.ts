import { representationOf } from '#lib/attachments/attachment';
import { MAX_DIRECT_BODY_BYTES, MAX_DIRECT_FILE_BYTES } from '#lib/attachments/content-policy';
import { attachments } from '#lib/attachments/service';
import { presignedUploadOf } from '#lib/attachments/upload-input';
import { clientIdOf } from '#lib/http/api-event';
import { directUploadOf } from '#lib/http/attachment-form';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { multipartBody } from '#lib/http/multipart';
import { MultipartForm } from '#lib/http/multipart-form';
import { requestExternalIdOf } from '#lib/http/path';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { presignedUploadValidator } from '#lib/validation/generated/per-schema/presigned-upload';

/**
 * POST /api/external/v1.1/Requests/{requestExternalId}/Attachments → 201 and Location, either way:
 * - multipart/form-data (file ≤ 4 MiB in field `file`; documentType, description, sha256 optional):
 *   stored and verified now, `available`;
 * - application/json {fileName, contentType, size ≤ 1 GiB, sha256, documentType?, description?}:
 *   `pending`, with `upload` (a presigned PUT, 15 min); available once the file arrives and matches.
 * Both are idempotent with an Idempotency-Key header (lib/http/idempotency.ts).
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
      Location: resourceUrl(event, 'attachments/get-attachment', { externalId, attachmentId: record.attachmentId }),
    });
  },
  {
    multipart: multipartBody({ maxBytes: MAX_DIRECT_BODY_BYTES, maxFileBytes: MAX_DIRECT_FILE_BYTES }),
    json: { validator: presignedUploadValidator },
    idempotency: idempotentRequests(),
  },
);
