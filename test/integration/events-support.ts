import { GetCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { authorizationChangeEntity } from '#lib/entities/authorization-history';
import { outboxEntity } from '#lib/entities/outbox';
import type { EventType, ServiceEvent } from '#lib/entities/service-event';

/** Helpers of the outbox and history tests: the raw items the writes left, read straight from the table. */

/** Every outbox item of a client, as stored, oldest first. */
export const outboxItemsOf = async (clientId: string) => {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'begins_with(pk, :prefix) AND entity = :entity',
        ExpressionAttributeValues: { ':prefix': `CLIENT#${clientId}#EVENT#`, ':entity': outboxEntity.name },
        ExclusiveStartKey,
      }),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items.sort((a, b) => String(a.gsi1sk ?? a.occurredAt).localeCompare(String(b.gsi1sk ?? b.occurredAt)));
};

/** An event whose type narrows its data. */
export type AnyEvent = { [T in EventType]: ServiceEvent<T> }[EventType];

/** The events of a client's outbox, oldest first. */
export const outboxEventsOf = async (clientId: string) =>
  (await outboxItemsOf(clientId)).map((item) => item.event as AnyEvent).sort((a, b) => a.id.localeCompare(b.id));

/** One outbox item by its event, or undefined. */
export const outboxItem = async (event: Pick<ServiceEvent, 'clientId' | 'id'>) =>
  (
    await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: outboxEntity.key({ clientId: event.clientId, eventId: event.id }),
        ConsistentRead: true,
      }),
    )
  ).Item;

/** Every history entry of a request, as stored, oldest first. */
export const historyItemsOf = async (clientId: string, externalId: string) => {
  const { Items = [] } = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: {
        ':pk': authorizationChangeEntity.keys.pk.render({ clientId, externalId }),
        ':prefix': authorizationChangeEntity.keys.sk.prefix,
      },
      ConsistentRead: true,
    }),
  );
  return Items as Record<string, unknown>[];
};

export { webhookBodyErrors } from '#test/support/webhook-bodies';
