import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalPut } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { transactWrite } from '#lib/aws/transactions';
import { tableName } from '#lib/config/resources';
import { rpaBatchEntity, rpaRunEntity } from '#lib/entities/rpa';
import type { ServiceEvent } from '#lib/entities/service-event';
import { outboxPutsOf } from '#lib/events/dynamo-outbox-store';
import type { RunStore } from './run-store.ts';

/** BatchGetItem reads at most 100 keys per call. */
const MAX_BATCH_GET = 100;
/** Rounds of UnprocessedKeys (throttling) before giving up. */
const MAX_BATCH_GET_ROUNDS = 5;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Puts `item` (at `version`) over the version before it; with its events, in one transaction. */
const versionedPut = async (item: Record<string, unknown>, version: number, events: readonly ServiceEvent[]) => {
  const previous = { ':previous': version - 1 };
  if (events.length === 0) return conditionalPut(item, 'version = :previous', previous);
  const put = { TableName: tableName(), Item: item, ConditionExpression: 'version = :previous' };
  await transactWrite([{ Put: { ...put, ExpressionAttributeValues: previous } }, ...outboxPutsOf(events)]);
};

/**
 * Items and keys are declared in lib/entities/rpa.ts; every write is a conditional put, in a transaction
 * with the outbox items of its events when it has some (docs/events.md).
 */
export const dynamoRunStore: RunStore = {
  getRun: async (ref) => {
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName(), Key: rpaRunEntity.key(ref), ConsistentRead: true }),
    );
    return Item && rpaRunEntity.matches(Item) ? rpaRunEntity.fromItem(Item) : undefined;
  },

  latestRuns: async (clientId, externalId, limit) => {
    const { Items } = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: {
          ':pk': rpaRunEntity.keys.pk.render({ clientId, externalId }),
          ':prefix': rpaRunEntity.keys.sk.prefix,
        },
        ScanIndexForward: false,
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).map(rpaRunEntity.fromItem);
  },

  getRuns: async (clientId, refs) => {
    if (refs.length > MAX_BATCH_GET) throw new Error(`getRuns reads at most ${MAX_BATCH_GET} runs`);
    if (refs.length === 0) return [];
    const table = tableName();
    let keys: Record<string, unknown>[] = refs.map((ref) => rpaRunEntity.key({ clientId, ...ref }));
    const items: Record<string, unknown>[] = [];
    for (let round = 1; keys.length > 0; round++) {
      if (round > MAX_BATCH_GET_ROUNDS) throw new Error('DynamoDB left run reads unprocessed');
      if (round > 1) await pause(20 * 2 ** round);
      const out = await dynamo.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }),
      );
      items.push(...(out.Responses?.[table] ?? []));
      keys = (out.UnprocessedKeys?.[table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
    }
    return items.filter(rpaRunEntity.matches).map(rpaRunEntity.fromItem);
  },

  createRun: (run) => conditionalPut(rpaRunEntity.toItem(run), 'attribute_not_exists(pk)'),
  updateRun: (run, events = []) => versionedPut(rpaRunEntity.toItem(run), run.version, events),

  getBatch: async (clientId, batchId) => {
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: tableName(), Key: rpaBatchEntity.key({ clientId, batchId }), ConsistentRead: true }),
    );
    return Item && rpaBatchEntity.matches(Item) ? rpaBatchEntity.fromItem(Item) : undefined;
  },
  createBatch: (batch) => conditionalPut(rpaBatchEntity.toItem(batch), 'attribute_not_exists(pk)'),
  updateBatch: (batch, events = []) => versionedPut(rpaBatchEntity.toItem(batch), batch.version, events),
};
