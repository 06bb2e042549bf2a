import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { payerSigningKeySetEntity } from '#lib/entities/payer-signing-keys';
import { GSI1 } from '#lib/table';
import { keySetIdOf } from './key-set-id.ts';
import type { PayerKeySetStore } from './key-set-store.ts';

/** Keys and item declared in lib/entities/payer-signing-keys.ts (docs/data-model.md, patterns 42–43). */
export const dynamoPayerKeySetStore: PayerKeySetStore = {
  ofClient: async (clientId) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: payerSigningKeySetEntity.key({ clientId }),
        ConsistentRead: true,
      }),
    );
    return Item && payerSigningKeySetEntity.matches(Item) ? payerSigningKeySetEntity.fromItem(Item) : undefined;
  },

  byKeySetId: async (keySetId) => {
    const { Items } = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI1.name,
        KeyConditionExpression: `${GSI1.partition} = :keySet`,
        ExpressionAttributeValues: { ':keySet': payerSigningKeySetEntity.keys.gsi1pk.render({ keySetId }) },
        Limit: 2,
      }),
    );
    // The id is derived from the client id: an item whose client does not give this id is not its key set.
    const found = (Items ?? [])
      .filter(payerSigningKeySetEntity.matches)
      .map(payerSigningKeySetEntity.fromItem)
      .filter((keySet) => keySetIdOf(keySet.clientId) === keySetId);
    return found.length === 1 ? found[0] : undefined;
  },

  put: (keySet) =>
    keySet.version === 1
      ? conditionalPut(payerSigningKeySetEntity.toItem(keySet), 'attribute_not_exists(pk)')
      : conditionalPut(payerSigningKeySetEntity.toItem(keySet), 'version = :previous', {
          ':previous': keySet.version - 1,
        }),
};
