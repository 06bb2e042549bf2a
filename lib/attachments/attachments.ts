import { retryOnConflict } from '#lib/concurrency';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { Conflict, NotFound } from '#lib/errors';
import { log } from '#lib/observability/logger';
import { isVisible } from './attachment.ts';
import {
  type AttachmentContext,
  type AttachmentServiceDependencies,
  contextOf,
  findVisible,
  requireRequest,
  transition,
} from './attachment-context.ts';
import { DOWNLOAD_URL_SECONDS, MAX_ATTEMPTS } from './attachment-limits.ts';
import { discard, sweep } from './attachment-removal.ts';
import { requestUpload, upload } from './attachment-uploads.ts';
import { verifyObject } from './attachment-verification.ts';
import { servedContentType } from './content-policy.ts';
import type { DirectUpload, PresignedUploadRequest } from './upload-input.ts';

export type { AttachmentServiceDependencies } from './attachment-context.ts';

async function list(ctx: AttachmentContext, clientId: string, externalId: string): Promise<AttachmentRecord[]> {
  await requireRequest(ctx, clientId, externalId);
  const at = ctx.now();
  return (await ctx.store.listByRequest(clientId, externalId))
    .filter((record) => isVisible(record, at))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.attachmentId.localeCompare(b.attachmentId));
}

/** A short-lived URL for the bytes; only an available attachment has bytes. */
async function download(ctx: AttachmentContext, clientId: string, externalId: string, attachmentId: string) {
  const record = await findVisible(ctx, clientId, externalId, attachmentId);
  if (record.status !== 'available') {
    throw new Conflict(
      `Attachment ${attachmentId} is ${record.status}: only an available attachment can be downloaded.`,
    );
  }
  return ctx.objects.presignGet(record.objectKey, {
    contentType: servedContentType(record.contentType),
    expiresInSeconds: DOWNLOAD_URL_SECONDS,
  });
}

/** Permanent: marked `deleting` (invisible at once), then every object version, then the record. */
async function remove(ctx: AttachmentContext, clientId: string, externalId: string, attachmentId: string) {
  await requireRequest(ctx, clientId, externalId);
  await retryOnConflict(
    async () => {
      const record = await ctx.store.get(clientId, externalId, attachmentId);
      // A deletion that failed half-way is finished by the next DELETE.
      if (!record || !(isVisible(record, ctx.now()) || record.status === 'deleting')) {
        throw new NotFound(`Attachment ${attachmentId}`);
      }
      const doomed =
        record.status === 'deleting'
          ? record
          : await transition(ctx, record, { status: 'deleting', expiresAt: undefined });
      await discard(ctx, doomed);
      log.info('Attachment deleted', { attachmentId });
    },
    { attempts: MAX_ATTEMPTS },
  );
}

/**
 * Attachment use cases, independent of HTTP and of AWS, each in the module of its job: uploads
 * (attachment-uploads.ts), verification (attachment-verification.ts), slots and quota
 * (attachment-admission.ts), clean-up and sweeping (attachment-removal.ts); reading and deleting here.
 */
export const attachmentService = (deps: AttachmentServiceDependencies) => {
  const ctx = contextOf(deps);
  return {
    upload: (clientId: string, externalId: string, input: DirectUpload) => upload(ctx, clientId, externalId, input),
    requestUpload: (clientId: string, externalId: string, input: PresignedUploadRequest) =>
      requestUpload(ctx, clientId, externalId, input),
    verifyObject: (objectKey: string) => verifyObject(ctx, objectKey),
    list: (clientId: string, externalId: string) => list(ctx, clientId, externalId),
    get: (clientId: string, externalId: string, attachmentId: string) =>
      findVisible(ctx, clientId, externalId, attachmentId),
    download: (clientId: string, externalId: string, attachmentId: string) =>
      download(ctx, clientId, externalId, attachmentId),
    remove: (clientId: string, externalId: string, attachmentId: string) =>
      remove(ctx, clientId, externalId, attachmentId),
    sweep: (clientId: string, externalId: string) => sweep(ctx, clientId, externalId),
  };
};
