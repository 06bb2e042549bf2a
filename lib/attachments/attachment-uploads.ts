import { createHash } from 'node:crypto';
import { VersionConflict } from '#lib/concurrency';
import type { AttachmentRecord, UploadMethod } from '#lib/entities/attachment';
import { Invalid } from '#lib/errors';
import { keys } from '#lib/object-keys';
import { log } from '#lib/observability/logger';
import { admitAndCreate } from './attachment-admission.ts';
import { type AttachmentContext, idsOf, requireRequest, transition } from './attachment-context.ts';
import { DIRECT_UPLOAD_DEADLINE_SECONDS, UPLOAD_GRACE_SECONDS, UPLOAD_URL_SECONDS } from './attachment-limits.ts';
import { discardOrLog } from './attachment-removal.ts';
import {
  assertContentMatches,
  assertSize,
  cleanFileName,
  fileNameFor,
  MAX_DIRECT_FILE_BYTES,
  MAX_PRESIGNED_FILE_BYTES,
  resolveType,
} from './content-policy.ts';
import type { PresignedRequest } from './object-storage.ts';
import type { Descriptive, DirectUpload, PresignedUploadRequest } from './upload-input.ts';

/*
 * The two upload flows. The record is written before the object, and becomes `available` only once the
 * object is in place and verified; any failure in between removes what was written (object first, then
 * record). If even that fails, the record is left `pending` with a deadline: invisible to clients once
 * past it, and swept with its object.
 */

type RecordedFile = Descriptive & { fileName: string; contentType: string; size: number; sha256: string };

const later = (from: Date, seconds: number) => new Date(from.getTime() + seconds * 1000).toISOString();

/** The metadata both upload flows record: the cleaned name, the resolved type, size, digest, descriptions. */
function fileOf(
  cleanName: string,
  type: Parameters<typeof fileNameFor>[1],
  size: number,
  sha256: string,
  input: Descriptive,
): RecordedFile {
  return {
    fileName: fileNameFor(cleanName, type),
    contentType: type.mediaType,
    size,
    sha256,
    ...(input.documentType ? { documentType: input.documentType } : {}),
    ...(input.description ? { description: input.description } : {}),
  };
}

function newRecord(
  ctx: AttachmentContext,
  ids: { clientId: string; externalId: string },
  file: RecordedFile,
  uploadMethod: UploadMethod,
  deadlineSeconds: number,
): AttachmentRecord {
  const at = ctx.now();
  const attachmentId = ctx.newId();
  return {
    clientId: ids.clientId,
    externalId: ids.externalId,
    attachmentId,
    objectKey: keys.attachmentObject(ids.clientId, ids.externalId, attachmentId),
    ...file,
    uploadMethod,
    status: 'pending',
    expiresAt: later(at, deadlineSeconds),
    version: 1,
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
  };
}

/** Makes the direct upload's record available once its object is written. */
async function makeAvailable(ctx: AttachmentContext, record: AttachmentRecord): Promise<AttachmentRecord> {
  try {
    return await transition(ctx, record, { status: 'available', expiresAt: undefined });
  } catch (error) {
    // The upload verifier (S3 event) may have made it available first; that is success too.
    const current = error instanceof VersionConflict ? await ctx.store.get(...idsOf(record)) : undefined;
    if (current?.status !== 'available') throw error;
    return current;
  }
}

/** Direct upload: checked, stored and verified before the answer; the result is available. */
export async function upload(
  ctx: AttachmentContext,
  clientId: string,
  externalId: string,
  input: DirectUpload,
): Promise<AttachmentRecord> {
  await requireRequest(ctx, clientId, externalId);
  const cleanName = cleanFileName(input.fileName);
  const type = resolveType(input.mediaType, cleanName);
  assertSize(input.bytes.length, MAX_DIRECT_FILE_BYTES);
  assertContentMatches(type, input.bytes);
  const sha256 = createHash('sha256').update(input.bytes).digest('hex');
  if (input.sha256 !== undefined && input.sha256 !== sha256) {
    throw new Invalid('The file received does not have the SHA-256 given in the sha256 field.', {
      reason: 'sha256',
    });
  }
  const file = fileOf(cleanName, type, input.bytes.length, sha256, input);
  const record = newRecord(ctx, { clientId, externalId }, file, 'direct', DIRECT_UPLOAD_DEADLINE_SECONDS);
  await admitAndCreate(ctx, record);
  try {
    await ctx.objects.put(record.objectKey, input.bytes, { contentType: type.mediaType, sha256 });
    const available = await makeAvailable(ctx, record);
    log.info('Attachment stored', { attachmentId: record.attachmentId, method: 'direct', size: record.size });
    return available;
  } catch (error) {
    await discardOrLog(ctx, record, 'direct upload');
    throw error;
  }
}

/** Presigned upload: the record waits (pending) for the client's PUT; the verifier settles it. */
export async function requestUpload(
  ctx: AttachmentContext,
  clientId: string,
  externalId: string,
  input: PresignedUploadRequest,
): Promise<{ record: AttachmentRecord; upload: PresignedRequest }> {
  await requireRequest(ctx, clientId, externalId);
  const cleanName = cleanFileName(input.fileName);
  const type = resolveType(input.contentType, cleanName);
  assertSize(input.size, MAX_PRESIGNED_FILE_BYTES);
  const file = fileOf(cleanName, type, input.size, input.sha256, input);
  const deadline = UPLOAD_URL_SECONDS + UPLOAD_GRACE_SECONDS;
  const record = newRecord(ctx, { clientId, externalId }, file, 'presigned', deadline);
  await admitAndCreate(ctx, record);
  try {
    const upload = await ctx.objects.presignPut(record.objectKey, {
      contentType: record.contentType,
      size: record.size,
      sha256: record.sha256,
      expiresInSeconds: UPLOAD_URL_SECONDS,
    });
    log.info('Attachment upload issued', { attachmentId: record.attachmentId, size: record.size });
    return { record, upload };
  } catch (error) {
    await discardOrLog(ctx, record, 'presigned upload');
    throw error;
  }
}
