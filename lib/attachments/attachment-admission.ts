import { VersionConflict } from '#lib/concurrency';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { LimitReached } from '#lib/errors';
import { log } from '#lib/observability/logger';
import { type AttachmentContext, idsOf } from './attachment-context.ts';
import { MAX_ATTACHMENTS_PER_REQUEST } from './attachment-limits.ts';
import { releaseSlot, sweep } from './attachment-removal.ts';
import { reconciledSlots, sweepDue } from './attachment-slots.ts';

/*
 * Admitting a new record: the request's slot (at most MAX_ATTACHMENTS_PER_REQUEST) and the client's
 * bytes quota, both taken before the record is written and given back if it is not.
 */

/**
 * Brings the request's slots in line with its records (attachment-slots.ts): set up for its first
 * upload or for records from before slots, and reclaimed from functions that died between the two
 * writes. The write is conditional on the version read; losing that race is fine (someone else wrote).
 */
async function reconcileSlots(ctx: AttachmentContext, clientId: string, externalId: string): Promise<void> {
  const current = await ctx.store.getSlots(clientId, externalId);
  const records = await ctx.store.listByRequest(clientId, externalId);
  const next = reconciledSlots({ clientId, externalId }, current, records, ctx.now());
  if (!next) return;
  if (current) {
    log.warn('Attachment slots reconciled', { taken: Object.keys(current.slots).length, records: records.length });
  }
  await ctx.store.putSlots(next).catch((error: unknown) => {
    if (!(error instanceof VersionConflict)) throw error;
  });
}

/** Notes when the request was swept; only a hint for the next upload, so a failure is only logged. */
function markSwept(ctx: AttachmentContext, clientId: string, externalId: string, at: Date): Promise<void> {
  return ctx.store
    .markSwept(clientId, externalId, at.toISOString())
    .catch((error: Error) => log.warn('Attachment sweep time not recorded', { errorName: error?.name }));
}

/**
 * Before a new record: take the record's slot, which fails atomically once the request has all it
 * may have. The slots item answers, so an upload reads no other record. A refusal stands only once the
 * request's left-overs are swept and the slots checked against the records (they may be missing or
 * may have drifted); otherwise left-overs are swept at most every SWEEP_INTERVAL_SECONDS.
 */
async function admit(ctx: AttachmentContext, record: AttachmentRecord): Promise<void> {
  const { clientId, externalId, attachmentId } = record;
  const reserve = () =>
    ctx.store.reserveSlot(clientId, externalId, attachmentId, ctx.now().toISOString(), MAX_ATTACHMENTS_PER_REQUEST);
  const reservation = await reserve();
  const sweptAt = ctx.now();
  if (reservation.taken) {
    if (!sweepDue(reservation.sweptAt, sweptAt)) return;
    await sweep(ctx, clientId, externalId);
    await markSwept(ctx, clientId, externalId, sweptAt);
    return;
  }
  // Swept first, so that left-overs give their slots back; the slots item exists once reconciled.
  await sweep(ctx, clientId, externalId);
  await reconcileSlots(ctx, clientId, externalId);
  await markSwept(ctx, clientId, externalId, sweptAt);
  if ((await reserve()).taken) return;
  throw new LimitReached(
    `Request ${externalId} already has ${MAX_ATTACHMENTS_PER_REQUEST} attachments, the most it may have.`,
  );
}

/**
 * Takes the record's slot and its declared bytes (refused at the client's quota), then writes the
 * record; a record that could not be written gives both back.
 */
export async function admitAndCreate(ctx: AttachmentContext, record: AttachmentRecord): Promise<void> {
  await admit(ctx, record);
  try {
    await ctx.quotas.reserveAttachmentBytes(record.clientId, record.size);
  } catch (error) {
    // Not releaseSlot: that would give back bytes this record never took.
    await ctx.store.releaseSlot(...idsOf(record), ctx.now().toISOString()).catch(() => undefined);
    throw error;
  }
  try {
    await ctx.store.create(record);
  } catch (error) {
    await releaseSlot(ctx, record);
    throw error;
  }
}
