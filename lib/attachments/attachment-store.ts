import type { AttachmentRecord } from './attachment.ts';

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
}
