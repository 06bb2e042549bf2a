import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionalUpdate } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { type TransactItem, transactWriteOrReasons } from '#lib/aws/transactions';
import { retryOnConflict, VersionConflict } from '#lib/concurrency';
import { tableName } from '#lib/config/resources';
import {
  automationFlightEntity,
  automationRunsInFlightEntity,
  automationRunsUsageEntity,
} from '#lib/entities/storage-usage';
import { log } from '#lib/observability/logger';
import {
  type Counter,
  counterChange,
  NOT_BELOW_ZERO,
  release,
  reserve,
  UNDER_QUOTA,
} from '#lib/tenancy/dynamo-storage-usage-store';
import type { AutomationUsageStore } from './automation-quotas.ts';

/*
 * The automation quotas' counters on DynamoDB. The hour's and the day's counts are the storage quotas'
 * counters (one conditional UpdateItem each). Runs in flight are a counter and one item per execution
 * in flight, in the client's automation partition, always changed together in one transaction: a start
 * puts its flight and adds its runs unless that passes the bound; a landing deletes a live flight and
 * takes its runs off. So every change of the flights changes the counter's version too, and the counter
 * is never below the runs of the live flights. Only time changes the truth alone: a flight whose
 * execution died without landing it expires at its timeout while the counter still counts it. The
 * recount heals that, and only when the counter refuses a start (docs/rpa.md, "Bounded automation").
 */

const DAY_SECONDS = 86_400;
/**
 * Transactions on one item at once conflict on DynamoDB (TransactionConflict) rather than queue; these
 * are a client's simultaneous starts and landings on its counter, retried after a short, jittered wait.
 */
const CONFLICT_ATTEMPTS = 5;
const CONFLICT_WAIT_MS = 50;

const runsCounter = (clientId: string, window: string, expiresAt?: Date): Counter => ({
  key: automationRunsUsageEntity.key({ clientId, window }),
  entity: automationRunsUsageEntity.name,
  count: 'runs',
  ids: {
    clientId,
    window,
    ...(expiresAt ? { expiration: Math.ceil(expiresAt.getTime() / 1000) + DAY_SECONDS } : {}),
  },
});

const inFlightCounter = (clientId: string): Counter => ({
  key: automationRunsInFlightEntity.key({ clientId }),
  entity: automationRunsInFlightEntity.name,
  count: 'runs',
  ids: { clientId },
});

/**
 * The transaction, tried again while it meets another on the same items: undefined when written, else
 * the index of the item whose condition refused it (or -1 when conflicts outlasted the attempts).
 */
async function transactRefusal(items: TransactItem[]): Promise<number | undefined> {
  const attempt = async () => {
    const reasons = await transactWriteOrReasons(items);
    if (!reasons) return undefined;
    const refused = reasons.indexOf('ConditionalCheckFailed');
    if (refused >= 0) return refused;
    if (reasons.includes('TransactionConflict')) throw new VersionConflict();
    throw new Error(`DynamoDB cancelled the transaction: ${reasons.join(', ')}`);
  };
  try {
    return await retryOnConflict(attempt, { attempts: CONFLICT_ATTEMPTS, backoffMs: CONFLICT_WAIT_MS });
  } catch (error) {
    if (error instanceof VersionConflict) return -1;
    throw error;
  }
}

const getItem = async (key: Record<string, unknown>) =>
  (await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;

/** The runs of the client's flights still live at `now`: every page (expired ones stay until their TTL). */
async function liveRuns(clientId: string, now: Date): Promise<number> {
  let runs = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: '#until > :now',
        ExpressionAttributeNames: { '#until': 'until' },
        ExpressionAttributeValues: {
          ':pk': automationFlightEntity.keys.pk.render({ clientId }),
          ':prefix': automationFlightEntity.keys.sk.prefix,
          ':now': now.toISOString(),
        },
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    for (const item of page.Items ?? []) runs += automationFlightEntity.fromItem(item).runs;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return runs;
}

export const dynamoAutomationUsage: AutomationUsageStore = {
  countRuns: (clientId, window, runs, limit, expiresAt) =>
    reserve(runsCounter(clientId, window, expiresAt), runs, limit, new Date().toISOString()),
  uncountRuns: async (clientId, window, runs) => {
    await release(runsCounter(clientId, window), runs, new Date().toISOString());
  },

  startFlight: async (clientId, executionName, runs, until, limit) => {
    if (limit - runs < 0) return false;
    const at = new Date().toISOString();
    const flight = automationFlightEntity.toItem({
      clientId,
      executionName,
      runs,
      until: until.toISOString(),
      expiration: Math.ceil(until.getTime() / 1000) + DAY_SECONDS,
      version: 1,
      createdAt: at,
      updatedAt: at,
    });
    const refused = await transactRefusal([
      {
        Update: {
          TableName: tableName(),
          ...counterChange(inFlightCounter(clientId), runs, UNDER_QUOTA, limit - runs, at),
        },
      },
      { Put: { TableName: tableName(), Item: flight, ConditionExpression: 'attribute_not_exists(pk)' } },
    ]);
    // Execution names are new ids: a flight already there is a bug, not a quota.
    if (refused === 1) throw new Error('An automation flight of this execution exists already');
    return refused === undefined;
  },

  recountFlights: async (clientId, now) => {
    // The counter first: any start or landing after this read changes its version, and the correction fails.
    const counter = await getItem(automationRunsInFlightEntity.key({ clientId }));
    const live = await liveRuns(clientId, now);
    if (!counter) return live;
    const { runs, version } = automationRunsInFlightEntity.fromItem(counter);
    if (runs === live) return live;
    try {
      await conditionalUpdate({
        Key: automationRunsInFlightEntity.key({ clientId }),
        UpdateExpression: 'SET #runs = :live, #updatedAt = :at ADD #version :one',
        ConditionExpression: '#version = :version',
        ExpressionAttributeNames: { '#runs': 'runs', '#updatedAt': 'updatedAt', '#version': 'version' },
        ExpressionAttributeValues: { ':live': live, ':at': new Date().toISOString(), ':one': 1, ':version': version },
      });
      log.info('Automation runs in flight recounted', { clientId, total: live, taken: runs - live });
    } catch (error) {
      // A start or landing came in between: the count it left is the next refusal's to check.
      if (!(error instanceof VersionConflict)) throw error;
    }
    return live;
  },

  endFlight: async (clientId, executionName, now) => {
    const key = automationFlightEntity.key({ clientId, executionName });
    const item = await getItem(key);
    if (!item) return;
    const flight = automationFlightEntity.fromItem(item);
    if (flight.until > now.toISOString()) {
      const at = now.toISOString();
      const refused = await transactRefusal([
        {
          Delete: {
            TableName: tableName(),
            Key: key,
            ConditionExpression: 'attribute_exists(pk) AND #until > :now',
            ExpressionAttributeNames: { '#until': 'until' },
            ExpressionAttributeValues: { ':now': at },
          },
        },
        {
          Update: {
            TableName: tableName(),
            ...counterChange(inFlightCounter(clientId), -flight.runs, NOT_BELOW_ZERO, flight.runs, at),
          },
        },
      ]);
      if (refused === undefined) return;
    }
    // Expired (a recount may have left it out already), landed meanwhile, or the counter holds less than
    // its runs: deleted without taking anything off, so the counter never goes below the live flights.
    // What it then counts too many, the next refused start's recount takes off.
    await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: key }));
  },
};
