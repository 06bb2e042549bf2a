import type { S3Event, S3EventRecord } from 'aws-lambda';
import { attachments } from '#lib/attachments/service';
import { observed } from '#lib/observability/invocation';
import { recordAttachmentVerdict } from '#lib/observability/metrics';

/** The key of an S3 event notification's object: S3 sends it URL-encoded, with spaces as "+". */
const objectKeyOf = (record: Pick<S3EventRecord, 's3'>) => decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));

/**
 * S3 ObjectCreated on the attachments bucket (both upload flows): each object is checked against its
 * record's size, SHA-256 and type, and the attachment becomes available or rejected; an object with
 * no live record is deleted. A failure throws, so Lambda retries the event (then its dead-letter queue).
 */
export const handler = observed('VerifyUploadedAttachment', async (event: S3Event) => {
  for (const record of event.Records) {
    if (!record.eventName.startsWith('ObjectCreated:')) continue;
    recordAttachmentVerdict(await attachments.verifyObject(objectKeyOf(record)));
  }
});
