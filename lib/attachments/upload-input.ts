import { invalid as badRequest } from '#lib/errors';
import type { MultipartForm } from '#lib/http/multipart';
import {
  descriptiveText,
  MAX_DESCRIPTION_LENGTH,
  MAX_DOCUMENT_TYPE_LENGTH,
  MAX_PRESIGNED_FILE_BYTES,
  sha256Hex,
} from './content-policy.ts';

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

export const FILE_FIELD = 'file';
const DIRECT_FIELDS = ['documentType', 'description', 'sha256'];
const PRESIGNED_FIELDS = ['fileName', 'contentType', 'size', 'sha256', 'documentType', 'description'];

const descriptive = (source: Record<string, unknown>): Descriptive => {
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

/** application/json: the declaration of a file the client will PUT to a presigned URL. */
export const presignedUploadOf = (body: unknown): PresignedUploadRequest => {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest(
      'The body must be a JSON object: {fileName, contentType, size, sha256, documentType?, description?}.',
    );
  }
  const source = body as Record<string, unknown>;
  const unknown = Object.keys(source).filter((name) => !PRESIGNED_FIELDS.includes(name));
  if (unknown.length > 0) {
    throw badRequest(`Unknown properties: ${unknown.map((name) => name.slice(0, 64)).join(', ')}.`, {
      allowed: PRESIGNED_FIELDS,
    });
  }
  const { fileName, contentType, size } = source;
  if (typeof fileName !== 'string') throw badRequest('fileName is required: a string.', { field: 'fileName' });
  if (typeof contentType !== 'string') {
    throw badRequest('contentType is required: a string such as application/pdf.', { field: 'contentType' });
  }
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw badRequest(`size is required: the file's length in bytes, an integer up to ${MAX_PRESIGNED_FILE_BYTES}.`, {
      field: 'size',
    });
  }
  return { fileName, contentType, size, sha256: sha256Hex(source.sha256), ...descriptive(source) };
};
