import type { AttachmentStore } from '#lib/attachments/attachment-store';
import type { ObjectStorage } from '#lib/attachments/object-storage';
import type { PasAttachment } from './pas/mapping-context.ts';
import { pasAttachmentsOf } from './submission-start.ts';

/*
 * The request's attachments as a submission carries them: PAS wants each document inline
 * (PASDocumentReference: data 1..1), so the bytes are read from storage when the Bundle is sent; the
 * start refuses a request whose attachments pass MAX_SUBMITTED_ATTACHMENT_BYTES (submission-start.ts).
 */

export const attachmentsWithData =
  (attachments: Pick<AttachmentStore, 'listByRequest'>, objects: Pick<ObjectStorage, 'readPrefix'>) =>
  async (clientId: string, externalId: string): Promise<PasAttachment[]> => {
    const records = (await attachments.listByRequest(clientId, externalId)).filter(
      (record) => record.status === 'available',
    );
    const listed = pasAttachmentsOf(records);
    return Promise.all(
      listed.map(async (attachment, i) => {
        const bytes = await objects.readPrefix(records[i]!.objectKey, attachment.size);
        return bytes ? { ...attachment, data: Buffer.from(bytes).toString('base64') } : attachment;
      }),
    );
  };
