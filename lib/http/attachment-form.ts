import { sha256Hex } from '#lib/attachments/content-policy';
import { type DirectUpload, descriptiveOf } from '#lib/attachments/upload-input';
import type { MultipartForm } from './multipart-form.ts';
import { badRequest } from './problem.ts';

/*
 * The multipart/form-data upload of an attachment, read at the edge: the form's shape (one file part
 * named `file`; optional documentType, description and sha256 fields) is HTTP's, what it says is the
 * domain's DirectUpload.
 */

const FILE_FIELD = 'file';
const DIRECT_FIELDS = ['documentType', 'description', 'sha256'];

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
    ...descriptiveOf(fields),
  };
};
