import type { AttachmentRecord } from '#lib/entities/attachment';

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
