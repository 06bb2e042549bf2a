import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config';
import { keys } from '#lib/keys';
import type { AttachmentRecord } from './attachment.ts';
import type { AttachmentStore } from './attachment-store.ts';

const FIELDS = [
  'clientId',
  'externalId',
  'attachmentId',
  'objectKey',
  'fileName',
  'contentType',
  'size',
  'sha256',
  'documentType',
  'description',
  'uploadMethod',
  'status',
  'rejectionReason',
  'expiresAt',
  'version',
  'createdAt',
  'updatedAt',
] as const satisfies ReadonlyArray<keyof AttachmentRecord>;

const toItem = (record: AttachmentRecord) => ({
  ...keys.attachment(record.clientId, record.externalId, record.attachmentId),
  entity: 'Attachment',
  ...Object.fromEntries(FIELDS.map((field) => [field, record[field]])),
});

const fromItem = (item: Record<string, unknown>): AttachmentRecord =>
  Object.fromEntries(FIELDS.filter((field) => item[field] !== undefined).map((field) => [field, item[field]])) as never;

export const dynamoAttachmentStore: AttachmentStore = {
  get: async (clientId, externalId, attachmentId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: keys.attachment(clientId, externalId, attachmentId),
        ConsistentRead: true,
      }),
    );
    return Item ? fromItem(Item) : undefined;
  },

  listByRequest: async (clientId, externalId) => {
    const records: AttachmentRecord[] = [];
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: tableName(),
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: {
            ':pk': keys.requestCollection(clientId, externalId),
            ':prefix': keys.attachmentPrefix,
          },
          ConsistentRead: true,
          ExclusiveStartKey: cursor,
        }),
      );
      records.push(...(page.Items ?? []).map(fromItem));
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return records;
  },

  create: (record) => conditionalPut(toItem(record), 'attribute_not_exists(pk)'),

  update: (record) => conditionalPut(toItem(record), 'version = :previous', { ':previous': record.version - 1 }),

  delete: async (clientId, externalId, attachmentId) => {
    await dynamo.send(
      new DeleteCommand({ TableName: tableName(), Key: keys.attachment(clientId, externalId, attachmentId) }),
    );
  },
};
