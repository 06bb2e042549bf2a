import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { submittedClaimEntity } from '#lib/entities/payer-subscription';
import type { SubmittedClaimStore } from './submitted-claim-store.ts';

/** The submitted claims' pointers: one item per claim identifier, in the client's keys. */
export const dynamoSubmittedClaimStore: SubmittedClaimStore = {
  record: async (claim) => {
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: submittedClaimEntity.toItem(claim) }));
  },

  get: async (clientId, claimIdentifier) => {
    const { Item } = await dynamo.send(
      new GetCommand({
        TableName: tableName(),
        Key: submittedClaimEntity.key({ clientId, claimIdentifier }),
        ConsistentRead: true,
      }),
    );
    return Item && submittedClaimEntity.matches(Item) ? submittedClaimEntity.fromItem(Item) : undefined;
  },
};
