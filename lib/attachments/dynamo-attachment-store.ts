import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config';
import { attachmentEntity } from '#lib/entities/attachment';
import type { AttachmentRecord } from './attachment.ts';
import type { AttachmentStore } from './attachment-store.ts';

const { toItem, fromItem } = attachmentEntity;

export const dynamoAttachmentStore: AttachmentStore = {
  get: async (clientId, externalId, attachmentId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: attachmentEntity.key({ clientId, externalId, attachmentId }),
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
            ':pk': attachmentEntity.keys.pk.render({ clientId, externalId }),
            ':prefix': attachmentEntity.keys.sk.prefix,
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
      new DeleteCommand({ TableName: tableName(), Key: attachmentEntity.key({ clientId, externalId, attachmentId }) }),
    );
  },
};
