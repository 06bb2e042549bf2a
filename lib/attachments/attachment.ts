/**
 * An attachment's metadata, as stored in its request's item collection. The file itself is one S3
 * object (`objectKey`). Lifecycle (docs/attachments.md):
 *
 *   pending ──object verified──► available ──DELETE──► deleting ──object gone──► (no record)
 *      │                                                   ▲
 *      ├──object differs from what was declared──► rejected ┘ (object deleted at once)
 *      └──past expiresAt──► swept (object, if any, then record)
 *
 * The record is written before the object and made available only after the object is verified, so
 * no visible record points at a missing object and no object lacks a record that leads to it.
 */
export type AttachmentStatus = 'pending' | 'available' | 'rejected' | 'deleting';
export type UploadMethod = 'direct' | 'presigned';

export interface AttachmentRecord {
  clientId: string;
  externalId: string;
  attachmentId: string;
  objectKey: string;
  fileName: string;
  contentType: string;
  /** Bytes: measured (direct) or declared by the client and verified on arrival (presigned). */
  size: number;
  /** Lower-case hex, same provenance as size. */
  sha256: string;
  documentType?: string;
  description?: string;
  uploadMethod: UploadMethod;
  status: AttachmentStatus;
  rejectionReason?: string;
  /** Pending only: the upload must be verified by then, else the attachment is discarded. */
  expiresAt?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

const isExpired = (record: AttachmentRecord, now: Date) =>
  record.status === 'pending' && record.expiresAt !== undefined && record.expiresAt <= now.toISOString();

/**
 * What clients may see: available and rejected attachments, and presigned uploads still waiting for
 * their file. A direct upload in flight, one being deleted, or an expired one does not exist for them.
 */
export const isVisible = (record: AttachmentRecord, now: Date) =>
  record.status === 'available' ||
  record.status === 'rejected' ||
  (record.status === 'pending' && record.uploadMethod === 'presigned' && !isExpired(record, now));

/** Left-overs of an interrupted upload or deletion: the sweep removes their object (if any), then them. */
export const isSweepable = (record: AttachmentRecord, now: Date) =>
  record.status === 'deleting' || isExpired(record, now);

/** The metadata clients read. File names and descriptions are PHI: they appear here and nowhere else (not in logs, not in URLs). */
export const representationOf = (record: AttachmentRecord) => ({
  attachmentId: record.attachmentId,
  requestExternalId: record.externalId,
  fileName: record.fileName,
  contentType: record.contentType,
  size: record.size,
  sha256: record.sha256,
  ...(record.documentType !== undefined ? { documentType: record.documentType } : {}),
  ...(record.description !== undefined ? { description: record.description } : {}),
  status: record.status,
  ...(record.rejectionReason !== undefined ? { rejectionReason: record.rejectionReason } : {}),
  uploadMethod: record.uploadMethod,
  createdAt: record.createdAt,
  updatedAt: record.updatedAt,
  ...(record.status === 'pending' ? { expiresAt: record.expiresAt } : {}),
});
