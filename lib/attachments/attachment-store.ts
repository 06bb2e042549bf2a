import type { AttachmentRecord, AttachmentSlots } from '#lib/entities/attachment';
import type { SlotReservation } from './attachment-slots.ts';

/** Port: attachment metadata, in the item collection of its request. Every write is single-item and conditional. */
export interface AttachmentStore {
  get(clientId: string, externalId: string, attachmentId: string): Promise<AttachmentRecord | undefined>;
  /** Every record of the request, in any status. */
  listByRequest(clientId: string, externalId: string): Promise<AttachmentRecord[]>;
  /** Writes version 1; throws VersionConflict when the id is taken. */
  create(record: AttachmentRecord): Promise<void>;
  /** Writes `record` (version = previous + 1) if the stored version is still `record.version - 1`; else VersionConflict. */
  update(record: AttachmentRecord): Promise<void>;
  /** Removes the record whatever its version; removing a missing record is not an error. */
  delete(clientId: string, externalId: string, attachmentId: string): Promise<void>;

  /** The request's attachment slots (attachment-slots.ts); undefined before any were set up. */
  getSlots(clientId: string, externalId: string): Promise<AttachmentSlots | undefined>;
  /**
   * Takes the slot of `attachmentId` (at `takenAt`) in one conditional write, if fewer than `max` are
   * taken or it holds one already; then also says when the request was last swept. Not taken when
   * every slot is, or the request has no slots yet.
   */
  reserveSlot(
    clientId: string,
    externalId: string,
    attachmentId: string,
    takenAt: string,
    max: number,
  ): Promise<SlotReservation>;
  /** Records when the request's left-overs were last swept; nothing when the request has no slots yet. */
  markSwept(clientId: string, externalId: string, at: string): Promise<void>;
  /**
   * Gives back the slot of `attachmentId`: true when this call freed it; giving back a slot that is
   * not held changes nothing (false), so of two concurrent releases exactly one frees it.
   */
  releaseSlot(clientId: string, externalId: string, attachmentId: string, at: string): Promise<boolean>;
  /** Writes `slots` whole if the stored version is still `slots.version - 1` (version 1: if there are none); else VersionConflict. */
  putSlots(slots: AttachmentSlots): Promise<void>;
}
