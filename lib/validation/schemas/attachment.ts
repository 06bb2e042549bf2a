import {
  MAX_DESCRIPTION_LENGTH,
  MAX_DOCUMENT_TYPE_LENGTH,
  MAX_PRESIGNED_FILE_BYTES,
} from '#lib/attachments/content-policy';
import { DRAFT } from './common.ts';

/**
 * JSON body of POST …/Requests/{requestExternalId}/Attachments: the declaration of a file the client
 * will PUT to a presigned URL (docs/attachments.md). What a schema cannot say stays in the domain
 * (lib/attachments/content-policy.ts): the allowed types (415), cleaning the file name, trimming the
 * descriptive texts and refusing control characters in them. null stands for an absent text.
 */
export const presignedUploadSchema = {
  $schema: DRAFT,
  $id: 'PresignedUpload',
  title: 'PresignedUpload',
  type: 'object',
  additionalProperties: false,
  required: ['fileName', 'contentType', 'size', 'sha256'],
  properties: {
    fileName: { type: 'string', description: "The file's name; its path and unsafe characters are removed" },
    contentType: { type: 'string', description: 'An allowed media type, such as application/pdf' },
    size: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_PRESIGNED_FILE_BYTES,
      description: "The file's length in bytes",
    },
    sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: "The file's SHA-256 in hexadecimal" },
    documentType: { type: ['string', 'null'], maxLength: MAX_DOCUMENT_TYPE_LENGTH },
    description: { type: ['string', 'null'], maxLength: MAX_DESCRIPTION_LENGTH, description: 'Line breaks allowed' },
  },
} as const;
