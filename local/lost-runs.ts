import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import type { RpaBatchRecord, RpaRunRecord } from '#lib/entities/rpa';
import { rpaBatchEntity, rpaRunEntity } from '#lib/entities/rpa';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { outcomeOfExecution, runEnder } from '#lib/runs/execution-ended';

/**
 * The local Step Functions keeps its executions in memory: when the local stack starts, no execution
 * of an earlier start exists any more (it was closed, or it crashed), so every run still `queued` or
 * `running` and every batch still `running` can never end. They are failed `execution_lost` as a read
 * of them would (lib/runs/execution-ended.ts): batches first (with their runs), then the other runs.
 * One Scan of the local table, at start only; AWS has the EventBridge rule instead. A table shared
 * with another running local stack (DYNAMODB_ENDPOINT) would lose that stack's runs: one stack per table.
 */
export const endLostRuns = async (): Promise<{ runs: number; batches: number }> => {
  const outcome = outcomeOfExecution(undefined)!;
  const { runs, batches } = await unendedItems();
  const ender = runEnder({ runs: dynamoRunStore });
  let ended = 0;
  for (const batch of batches) ended += (await ender.endBatch(batch.clientId, batch.batchId, outcome)).ended;
  for (const run of runs) if (await ender.endRun(run, outcome)) ended++;
  return { runs: ended, batches: batches.length };
};

/** Runs still queued or running, and batches still running, read in one paged Scan. */
const unendedItems = async () => {
  const runs: RpaRunRecord[] = [];
  const batches: RpaBatchRecord[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page: ScanCommandOutput = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression:
          '(begins_with(sk, :run) AND #status IN (:queued, :running)) OR (sk = :batch AND #status = :running)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':run': rpaRunEntity.keys.sk.prefix,
          ':batch': rpaBatchEntity.keys.sk.render({}),
          ':queued': 'queued',
          ':running': 'running',
        },
        ...(ExclusiveStartKey ? { ExclusiveStartKey } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      if (rpaRunEntity.matches(item)) runs.push(rpaRunEntity.fromItem(item));
      else if (rpaBatchEntity.matches(item)) batches.push(rpaBatchEntity.fromItem(item));
    }
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return { runs, batches };
};
