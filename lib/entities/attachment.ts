import { attr, defineEntity } from './define-entity.ts';
import { requestEntity } from './request.ts';

/** A request's attachment slots, as attachmentSlotsEntity stores them (lib/attachments/attachment-slots.ts). */
export interface AttachmentSlots {
  clientId: string;
  externalId: string;
  /** Attachment id → when its slot was taken (ISO 8601). */
  slots: Record<string, string>;
  /** When an upload last swept the request's left-overs (SWEEP_INTERVAL_SECONDS); absent before the first sweep. */
  sweptAt?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

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
