import { dynamo } from '#lib/aws/dynamodb';

/** One DynamoDB call the stores made: its command, the items it read, the capacity it consumed. */
export interface DynamoCall {
  command: string;
  index?: string;
  /** The ProjectionExpression, when the call read only some attributes. */
  projection?: string;
  scanned: number;
  capacityUnits: number;
  /** The error's name when DynamoDB refused the call (`ConditionalCheckFailedException`: a condition did not hold). */
  error?: string;
}

/**
 * Records every call this process's `dynamo` client sends (the one every store uses), asking
 * DynamoDB for the capacity each consumed (`ReturnConsumedCapacity: TOTAL`). `calls` holds what was
 * sent since the last `reset()`; `stop()` removes the recorder. Counting, not timing: tests assert
 * round trips and items read, benchmarks add up capacity.
 */
export const recordDynamoCalls = () => {
  const name = `recordDynamoCalls-${Math.random().toString(36).slice(2)}`;
  let calls: DynamoCall[] = [];
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const command = context.commandName ?? 'unknown';
      const index = {
        ...(typeof input.IndexName === 'string' ? { index: input.IndexName } : {}),
        ...(typeof input.ProjectionExpression === 'string' ? { projection: input.ProjectionExpression } : {}),
      };
      let result: Awaited<ReturnType<typeof next>>;
      try {
        result = await next(args);
      } catch (error) {
        // A refused conditional write is a round trip too.
        calls.push({ command, ...index, scanned: 0, capacityUnits: 0, error: (error as Error).name });
        throw error;
      }
      const output = result.output as {
        ScannedCount?: number;
        Count?: number;
        Item?: unknown;
        ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }>;
      };
      const consumed = [output.ConsumedCapacity ?? []].flat();
      calls.push({
        command,
        ...index,
        scanned: output.ScannedCount ?? (output.Item ? 1 : 0),
        capacityUnits: consumed.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0),
      });
      return result;
    },
    { step: 'initialize', name },
  );
  return {
    get calls(): readonly DynamoCall[] {
      return calls;
    },
    reset: () => {
      calls = [];
    },
    stop: () => {
      dynamo.middlewareStack.remove(name);
    },
  };
};

/** The commands of `calls`, in order (e.g. `['GetItemCommand', 'PutItemCommand']`). */
export const commandsOf = (calls: readonly DynamoCall[]) => calls.map((call) => call.command);
