import { dynamo } from '#lib/aws/dynamodb';
import { clientSettingsAttributes } from '#lib/entities/tenancy';
import { log } from '#lib/observability/logger';
import { leadingKeysOf, type RouteAccess, routeAccess, type TableAccess } from '#lib/routes/access-model';
import { automationTasks, invokedFunctions, recheckTasks } from '#lib/routes/automation-tasks';
import {
  automationEventFunctions,
  eventFunctions,
  scheduledPayerFunctions,
  webhookDeliveryFunctions,
} from '#lib/routes/event-functions';
import { PARTITION, stringLike } from '#lib/routes/table-partitions';
import { TABLE_KEY } from '#lib/table';
import { currentHandler } from './invocations.ts';

/*
 * The table grants of IAM, held locally (LOCAL_TABLE_GRANTS=enforce): in an invocation of a function whose
 * access names the partitions it may touch (`leadingKeys`), every call of the stores' DynamoDB client must be one
 * of its actions on partitions its patterns allow, each item of a transaction or batch too, or a projected read of
 * a Client item's settings where it may (`clientSettings`); else it fails as AWS fails it, AccessDeniedException.
 * As on AWS, nothing of the sort key is checked. Functions without `leadingKeys`, and code outside a function's
 * invocation (the outbox relay, the local webhook timer, the tests' own calls), are not checked; nor is the
 * authorizer, whose usage-key read is granted in infra/api-stack.ts rather than by its row.
 */

/** A DynamoDB action one call (or one item of a transaction) takes, on these partitions or an index. */
interface Touch {
  action: string;
  partitions: string[];
  index?: string;
  /** The attribute names a GetItem's projection asks for. */
  projection?: string[];
}

type Key = Record<string, unknown>;

/** What the check reads of a call's input (the document client's: keys and values as plain values). */
interface Input {
  Key?: Key;
  Item?: Key;
  IndexName?: string;
  ProjectionExpression?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
  RequestItems?: Record<string, { Keys: Key[] }>;
  TransactItems?: Array<{
    Put?: { Item: Key };
    Update?: { Key: Key };
    Delete?: { Key: Key };
    ConditionCheck?: { Key: Key };
  }>;
}

const partitionOf = (key: Key | undefined) => String(key?.[TABLE_KEY.partition]);

/** The names of an expression's `#placeholder`s and plain names, resolved. */
const namesIn = (expression: string, names: Record<string, string> = {}) =>
  (expression.match(/#?[A-Za-z_][\w]*/g) ?? []).map((token) => names[token] ?? token);

/** The partition a Query's key condition names (`pk = :pk`, by placeholder or not). */
const queriedPartition = (input: Input) => {
  for (const [, name, value] of String(input.KeyConditionExpression).matchAll(/(#?\w+)\s*=\s*(:\w+)/g)) {
    if ((input.ExpressionAttributeNames?.[name!] ?? name) === TABLE_KEY.partition)
      return String(input.ExpressionAttributeValues?.[value!]);
  }
  return 'unknown';
};

const touchesOf = (command: string, input: Input): Touch[] => {
  switch (command) {
    case 'GetItemCommand':
      return [
        {
          action: 'GetItem',
          partitions: [partitionOf(input.Key)],
          ...(input.ProjectionExpression
            ? { projection: namesIn(input.ProjectionExpression, input.ExpressionAttributeNames) }
            : {}),
        },
      ];
    case 'PutItemCommand':
      return [{ action: 'PutItem', partitions: [partitionOf(input.Item)] }];
    case 'UpdateItemCommand':
      return [{ action: 'UpdateItem', partitions: [partitionOf(input.Key)] }];
    case 'DeleteItemCommand':
      return [{ action: 'DeleteItem', partitions: [partitionOf(input.Key)] }];
    case 'QueryCommand':
      return [
        input.IndexName
          ? { action: 'Query', partitions: [], index: input.IndexName }
          : { action: 'Query', partitions: [queriedPartition(input)] },
      ];
    case 'BatchGetItemCommand':
      return [
        {
          action: 'BatchGetItem',
          partitions: Object.values(input.RequestItems ?? {}).flatMap((read) => read.Keys.map(partitionOf)),
        },
      ];
    case 'TransactWriteItemsCommand':
      return (input.TransactItems ?? []).flatMap((item): Touch[] => [
        ...(item.Put ? [{ action: 'PutItem', partitions: [partitionOf(item.Put.Item)] }] : []),
        ...(item.Update ? [{ action: 'UpdateItem', partitions: [partitionOf(item.Update.Key)] }] : []),
        ...(item.Delete ? [{ action: 'DeleteItem', partitions: [partitionOf(item.Delete.Key)] }] : []),
        ...(item.ConditionCheck
          ? [{ action: 'ConditionCheckItem', partitions: [partitionOf(item.ConditionCheck.Key)] }]
          : []),
      ]);
    default:
      return [{ action: command.replace(/Command$/, ''), partitions: [] }];
  }
};

const KEYS_AND_SETTINGS = new Set<string>([TABLE_KEY.partition, TABLE_KEY.sort, ...clientSettingsAttributes]);

/** Whether the function's grants allow the touch: its action on its partitions, or a read of a client's settings. */
const allows = (table: TableAccess, touch: Touch) => {
  const action = touch.action as TableAccess['actions'][number];
  if (touch.index) return action === 'Query' && (table.queryIndexes ?? []).includes(touch.index as never);
  const patterns = table.actions.includes(action) ? leadingKeysOf(table, action) : [];
  if (patterns?.length && touch.partitions.every((pk) => patterns.some((pattern) => stringLike(pattern, pk)))) {
    return true;
  }
  return Boolean(
    table.clientSettings &&
      action === 'GetItem' &&
      touch.projection?.every((name) => KEYS_AND_SETTINGS.has(name)) &&
      touch.partitions.every((pk) => stringLike(PARTITION.anyClient, pk)),
  );
};

/** The functions the check applies to, by handler: those whose table access names partitions. */
const checkedFunctions = (): Map<string, TableAccess> => {
  const rows: Array<[string, RouteAccess]> = [
    ...Object.entries(routeAccess),
    ...[
      ...automationTasks,
      ...invokedFunctions,
      ...recheckTasks,
      ...eventFunctions,
      ...automationEventFunctions,
      ...webhookDeliveryFunctions,
      ...scheduledPayerFunctions,
    ].map((row): [string, RouteAccess] => [row.handler, row.access]),
  ];
  return new Map(
    rows.flatMap(([handler, { table }]) => (table?.leadingKeys ? [[handler, table] as [string, TableAccess]] : [])),
  );
};

/** A key with its ids hidden: the literal segments of our keys are upper case, ids seldom are. */
const shapeOf = (pk: string) =>
  pk
    .split('#')
    .map((part) => (/^[A-Z]+$/.test(part) ? part : '…'))
    .join('#');

class AccessDenied extends Error {
  override name = 'AccessDeniedException';
  readonly $fault = 'client';
}

/** Holds every checked function to its table grants from now on, in this process (the local stack's). */
export const enforceTableGrants = () => {
  const checked = checkedFunctions();
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const handler = currentHandler();
      const table = handler ? checked.get(handler) : undefined;
      if (table) {
        for (const touch of touchesOf(context.commandName ?? '', args.input as Input)) {
          if (allows(table, touch)) continue;
          const where = touch.index ? `index ${touch.index}` : touch.partitions.map(shapeOf).join(', ');
          log.warn('Table access refused: outside the function grants', {
            context: `${handler}: dynamodb:${touch.action} on ${where}`,
          });
          throw new AccessDenied(`${handler} is not authorized to perform dynamodb:${touch.action} on ${where}`);
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'localTableGrants' },
  );
};
