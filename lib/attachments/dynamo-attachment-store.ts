import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut, conditionalUpdate } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config/resources';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { attachmentEntity, attachmentSlotsEntity } from '#lib/entities/attachment';
import type { SlotReservation } from './attachment-slots.ts';
import type { AttachmentStore } from './attachment-store.ts';

const { toItem, fromItem } = attachmentEntity;

/** Attribute names by placeholder: `#id` is an attachment id (a map key), and `version` and others are reserved words. */
const slotNames = (attachmentId: string) => ({
  '#slots': 'slots',
  '#id': attachmentId,
  '#version': 'version',
  '#updatedAt': 'updatedAt',
});

const refusedAsFalse = (error: unknown) => {
  if (error instanceof VersionConflict) return false;
  throw error;
};

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

  getSlots: async (clientId, externalId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: attachmentSlotsEntity.key({ clientId, externalId }),
        ConsistentRead: true,
      }),
    );
    return Item ? attachmentSlotsEntity.fromItem(Item) : undefined;
  },

  reserveSlot: (clientId, externalId, attachmentId, takenAt, max) =>
    conditionalUpdate({
      Key: attachmentSlotsEntity.key({ clientId, externalId }),
      UpdateExpression: 'SET #slots.#id = :takenAt, #updatedAt = :takenAt ADD #version :one',
      // The count and the take in one write: this is what keeps concurrent uploads within the limit.
      ConditionExpression: 'attribute_exists(#slots) AND (size(#slots) < :max OR attribute_exists(#slots.#id))',
      ExpressionAttributeNames: slotNames(attachmentId),
      ExpressionAttributeValues: { ':takenAt': takenAt, ':one': 1, ':max': max },
      // The item as it was, for its sweptAt: returned values cost no read capacity.
      ReturnValues: 'ALL_OLD',
    }).then(
      ({ Attributes }): SlotReservation => ({ taken: true, sweptAt: Attributes?.sweptAt as string | undefined }),
      (error: unknown): SlotReservation => {
        if (error instanceof VersionConflict) return { taken: false };
        throw error;
      },
    ),

  markSwept: async (clientId, externalId, at) => {
    await conditionalUpdate({
      Key: attachmentSlotsEntity.key({ clientId, externalId }),
      UpdateExpression: 'SET #sweptAt = :at',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#sweptAt': 'sweptAt' },
      ExpressionAttributeValues: { ':at': at },
    }).catch(refusedAsFalse);
  },

  releaseSlot: (clientId, externalId, attachmentId, at) =>
    // Conditional, so that a slot given back twice is freed once and never creates the item.
    conditionalUpdate({
      Key: attachmentSlotsEntity.key({ clientId, externalId }),
      UpdateExpression: 'REMOVE #slots.#id SET #updatedAt = :at ADD #version :one',
      ConditionExpression: 'attribute_exists(#slots.#id)',
      ExpressionAttributeNames: slotNames(attachmentId),
      ExpressionAttributeValues: { ':at': at, ':one': 1 },
    }).then(() => true, refusedAsFalse),

  putSlots: (slots) =>
    slots.version === 1
      ? conditionalPut(attachmentSlotsEntity.toItem(slots), 'attribute_not_exists(pk)')
      : conditionalPut(attachmentSlotsEntity.toItem(slots), 'version = :previous', { ':previous': slots.version - 1 }),
};
