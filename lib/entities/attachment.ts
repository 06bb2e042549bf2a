import type { AttachmentRecord, AttachmentStatus, UploadMethod } from '#lib/attachments/attachment';
import type { AttachmentSlots } from '#lib/attachments/attachment-slots';
import { attr, defineEntity } from './define-entity.ts';
import { requestEntity } from './request.ts';

/** An attachment's metadata, in its request's item collection (docs/attachments.md). */
export const attachmentEntity = defineEntity<AttachmentRecord>()({
  name: 'Attachment',
  keys: { pk: requestEntity.keys.pk.template, sk: 'ATT#<attachmentId>' },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    attachmentId: attr.string(),
    objectKey: attr.string(),
    fileName: attr.string(),
    contentType: attr.string(),
    size: attr.number(),
    sha256: attr.string(),
    documentType: attr.optional(attr.string()),
    description: attr.optional(attr.string()),
    uploadMethod: attr.string<UploadMethod>(),
    status: attr.string<AttachmentStatus>(),
    rejectionReason: attr.optional(attr.string()),
    expiresAt: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/**
 * A request's attachment slots: one slot per attachment record, taken before the record is written,
 * so the limit on attachments holds under concurrent uploads (lib/attachments/attachment-slots.ts).
 * `ATTACHMENTS` is outside the `ATT#` prefix, so listing the attachments never reads it.
 */
export const attachmentSlotsEntity = defineEntity<AttachmentSlots>()({
  name: 'AttachmentSlots',
  keys: { pk: requestEntity.keys.pk.template, sk: 'ATTACHMENTS' },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    slots: attr.map<Record<string, string>>(),
    sweptAt: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
