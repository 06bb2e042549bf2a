import { invalid as badRequest } from '#lib/errors';
import type { MultipartForm } from '#lib/http/multipart';
import { descriptiveText, MAX_DESCRIPTION_LENGTH, MAX_DOCUMENT_TYPE_LENGTH, sha256Hex } from './content-policy.ts';

/** What a client says about a file, before any check of the file itself. */
export interface Descriptive {
  documentType?: string;
  description?: string;
}

export interface DirectUpload extends Descriptive {
  fileName: string | undefined;
  /** The file part's Content-Type, as sent. */
  mediaType: string | undefined;
  bytes: Uint8Array;
  /** Optional: when given, the received bytes must have this SHA-256. */
  sha256?: string;
}

export interface PresignedUploadRequest extends Descriptive {
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** The JSON declaration as the PresignedUpload schema (lib/validation/schemas/attachment.ts) admits it. */
export interface PresignedUploadDeclaration {
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
  documentType?: string | null;
  description?: string | null;
}

export const FILE_FIELD = 'file';
const DIRECT_FIELDS = ['documentType', 'description', 'sha256'];

const descriptive = (source: { documentType?: unknown; description?: unknown }): Descriptive => {
  const documentType = descriptiveText('documentType', source.documentType, MAX_DOCUMENT_TYPE_LENGTH);
  const description = descriptiveText('description', source.description, MAX_DESCRIPTION_LENGTH);
  return { ...(documentType ? { documentType } : {}), ...(description ? { description } : {}) };
};

/** multipart/form-data: one file part named `file`, optional documentType, description and sha256 fields. */
export const directUploadOf = (form: MultipartForm): DirectUpload => {
  const fields: Record<string, string> = {};
  for (const [name, values] of form.fields) {
    if (name === FILE_FIELD) {
      throw badRequest('Form field "file" must be a file part: send it with a filename.', { field: FILE_FIELD });
    }
    if (!DIRECT_FIELDS.includes(name)) {
      throw badRequest(`Unknown form field "${name.slice(0, 64)}". Fields: file, ${DIRECT_FIELDS.join(', ')}.`, {
        field: name.slice(0, 64),
      });
    }
    if (values.length > 1) throw badRequest(`Form field "${name}" was sent more than once.`, { field: name });
    fields[name] = values[0]!;
  }
  const file = form.files[0];
  if (!file) throw badRequest('The form has no file: send it in the form field "file".', { field: FILE_FIELD });
  if (file.field !== FILE_FIELD) {
    throw badRequest(`The file must be sent in the form field "file", not "${file.field.slice(0, 64)}".`, {
      field: FILE_FIELD,
    });
  }
  return {
    fileName: file.fileName,
    mediaType: file.mediaType,
    bytes: file.bytes,
    ...(fields.sha256 !== undefined ? { sha256: sha256Hex(fields.sha256) } : {}),
    ...descriptive(fields),
  };
};

/**
 * application/json: the declaration of a file the client will PUT to a presigned URL. The endpoint has
 * already checked the body against the PresignedUpload schema (types, size bounds, SHA-256 digits,
 * text lengths, no unknown properties); what is left is the domain's: trimmed texts, a lower-case digest.
 */
export const presignedUploadOf = (body: unknown): PresignedUploadRequest => {
  const { fileName, contentType, size, sha256, ...texts } = body as PresignedUploadDeclaration;
  return { fileName, contentType, size, sha256: sha256.toLowerCase(), ...descriptive(texts) };
};
