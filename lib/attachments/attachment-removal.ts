import type { AttachmentRecord } from '#lib/entities/attachment';
import { log } from '#lib/observability/logger';
import { isSweepable } from './attachment.ts';
import { type AttachmentContext, idsOf } from './attachment-context.ts';

/*
 * Removing what an attachment left: its slot and bytes, its record, its object. Used by deletion, by the
 * verifier, by an upload that failed half-way, and by the sweep of a request's left-overs.
 */

/**
 * Gives back the slot of an attachment whose record is gone (or was never written), and with it the
 * record's bytes: only the release that freed the slot gives them back, so bytes are returned once
 * however many clean-ups race. A failure is only logged: the slot is then reclaimed when the request
 * next runs out of slots (admit); its bytes stay counted (docs/security.md, "Quotas").
 */
export async function releaseSlot(ctx: AttachmentContext, record: AttachmentRecord): Promise<void> {
  const freed = await ctx.store.releaseSlot(...idsOf(record), ctx.now().toISOString()).catch((error: Error) => {
    log.error('Attachment slot release failed; it will be reclaimed', {
      attachmentId: record.attachmentId,
      errorName: error?.name,
    });
    return false;
  });
  if (freed) await ctx.quotas.releaseAttachmentBytes(record.clientId, record.size);
}

/** The record, then its slot: a failure in between leaves a slot taken too long, never one too few. */
export async function deleteRecord(ctx: AttachmentContext, record: AttachmentRecord): Promise<void> {
  await ctx.store.delete(...idsOf(record));
  await releaseSlot(ctx, record);
}

/** Object first (every version), then the record: a failure in between leaves a record that leads to the object. */
export async function discard(ctx: AttachmentContext, record: AttachmentRecord): Promise<void> {
  await ctx.objects.deleteAllVersions(record.objectKey);
  await deleteRecord(ctx, record);
}

export function discardOrLog(ctx: AttachmentContext, record: AttachmentRecord, context: string): Promise<void> {
  return discard(ctx, record).catch((error: Error) =>
    log.error('Attachment clean-up failed; the sweep will retry', {
      context,
      attachmentId: record.attachmentId,
      status: record.status,
      errorName: error?.name,
    }),
  );
}

/** Removes a request's left-overs (interrupted uploads and deletions). Best effort; returns how many went. */
export async function sweep(ctx: AttachmentContext, clientId: string, externalId: string): Promise<number> {
  const at = ctx.now();
  const dead = (await ctx.store.listByRequest(clientId, externalId)).filter((r) => isSweepable(r, at));
  for (const record of dead) await discardOrLog(ctx, record, 'sweep');
  return dead.length;
}
