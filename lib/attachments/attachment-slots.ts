import type { AttachmentRecord, AttachmentSlots } from '#lib/entities/attachment';

/*
 * The bound on a request's attachments, held atomically without transactions: one item in the
 * request's item collection holds a slot per attachment record, keyed by attachment id. An upload
 * takes its slot with one conditional write (refused once every slot is taken) before it writes its
 * record, and gives it back once the record is gone. What counts is what counted before slots: every
 * record of the request, whatever its status (rejected ones included), until it is deleted or swept.
 *
 * Slots name their attachment, rather than being a bare counter, so that giving one back twice (an
 * upload's clean-up and the verifier racing) frees it once, and so that reconciling them with the
 * records can tell a slot held by an upload in flight from one leaked by a function that died
 * between its two writes.
 */

/**
 * A slot without a record this long after it was taken is leaked: an upload writes its record just
 * after taking its slot, within one function run (29 s at most), so this is never one in flight.
 */
export const ABANDONED_SLOT_SECONDS = 5 * 60;

/**
 * How often uploads sweep a request's left-overs, at most (instead of a Query of every record on each
 * upload). A left-over costs nothing visible meanwhile: it is invisible to clients, and a request at its
 * limit sweeps before refusing. 5 minutes is the shortest deadline of an upload (a direct one's).
 */
export const SWEEP_INTERVAL_SECONDS = 5 * 60;

/** Whether a request last swept at `sweptAt` (undefined: never) is due for another sweep. */
export const sweepDue = (sweptAt: string | undefined, now: Date) =>
  sweptAt === undefined || Date.parse(sweptAt) + SWEEP_INTERVAL_SECONDS * 1000 <= now.getTime();

/** A slot reservation: taken or not and, when taken, when the request was last swept. */
export type SlotReservation = { taken: false } | { taken: true; sweptAt: string | undefined };

/**
 * The slots as the request's records say they should be, or undefined when they already are: a slot
 * for every record (one written before slots existed, or whose slot was lost), and none for an
 * attachment that has no record, unless it was taken too recently to tell (its upload may be about
 * to write the record). `current` undefined: the request has no slots yet.
 */
export const reconciledSlots = (
  ids: { clientId: string; externalId: string },
  current: AttachmentSlots | undefined,
  records: readonly AttachmentRecord[],
  now: Date,
): AttachmentSlots | undefined => {
  const abandonedBefore = new Date(now.getTime() - ABANDONED_SLOT_SECONDS * 1000).toISOString();
  const recorded = new Map(records.map((record) => [record.attachmentId, record.createdAt]));
  const slots: Record<string, string> = {};
  let changed = current === undefined;
  for (const [attachmentId, takenAt] of Object.entries(current?.slots ?? {})) {
    if (recorded.has(attachmentId) || takenAt > abandonedBefore) slots[attachmentId] = takenAt;
    else changed = true;
  }
  for (const [attachmentId, createdAt] of recorded) {
    if (slots[attachmentId] !== undefined) continue;
    slots[attachmentId] = createdAt;
    changed = true;
  }
  if (!changed) return undefined;
  const at = now.toISOString();
  return {
    ...ids,
    slots,
    ...(current?.sweptAt !== undefined ? { sweptAt: current.sweptAt } : {}),
    version: (current?.version ?? 0) + 1,
    createdAt: current?.createdAt ?? at,
    updatedAt: at,
  };
};
