import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { attachmentService } from './attachments.ts';
import { dynamoAttachmentStore } from './dynamo-attachment-store.ts';
import { s3ObjectStorage } from './s3-object-storage.ts';

/** The attachment service on DynamoDB and S3, built once per cold start. Tests that inject failures use attachmentService. */
export const attachments = attachmentService({
  requests: dynamoRequestStore,
  store: dynamoAttachmentStore,
  objects: s3ObjectStorage,
  quotas: dynamoStorageQuotas,
});
