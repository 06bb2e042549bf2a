import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { authorizationChangeEntity } from '#lib/entities/authorization-history';
import type { AuthorizationHistoryStore } from './authorization-history-store.ts';

const { keys, fromItem } = authorizationChangeEntity;

/** An entry's position in its history: its sort key without the prefix (`<changedAt>#<changeId>`). */
const positionOf = (sk: string) => sk.slice(keys.sk.prefix.length);

/** A request's history (docs/data-model.md, pattern 30): one Query in reverse key order, newest first. */
export const dynamoAuthorizationHistoryStore: AuthorizationHistoryStore = {
  page: async (clientId, externalId, { after, limit }) => {
    const pk = keys.pk.render({ clientId, externalId });
    const { Items = [] } = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': keys.sk.prefix },
        ...(after !== undefined ? { ExclusiveStartKey: { pk, sk: `${keys.sk.prefix}${after}` } } : {}),
        ScanIndexForward: false,
        // One more than the page: a full last page then says there is no next one.
        Limit: limit + 1,
        ConsistentRead: true,
      }),
    );
    const entries = Items.slice(0, limit);
    const more = Items.length > limit;
    return {
      entries: entries.map(fromItem),
      ...(more ? { next: positionOf(entries.at(-1)!.sk as string) } : {}),
    };
  },
};
