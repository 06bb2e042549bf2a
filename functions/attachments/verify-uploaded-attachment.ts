import type { S3Event } from 'aws-lambda';
import { attachmentService } from '#lib/attachments/attachments';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { objectKeyOf, s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';

const attachments = attachmentService({
  requests: dynamoRequestStore,
  store: dynamoAttachmentStore,
  objects: s3ObjectStorage,
});

/**
 * S3 ObjectCreated on the attachments bucket (both upload flows): each object is checked against its
 * record's size, SHA-256 and type, and the attachment becomes available or rejected; an object with
 * no live record is deleted. A failure throws, so Lambda retries the event (then its dead-letter queue).
 */
export const handler = async (event: S3Event) => {
  for (const record of event.Records) {
    if (record.eventName.startsWith('ObjectCreated:')) await attachments.verifyObject(objectKeyOf(record));
  }
};
