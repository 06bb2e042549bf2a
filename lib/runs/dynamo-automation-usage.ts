import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { automationFlightEntity, automationRunsUsageEntity } from '#lib/entities/storage-usage';
import { type Counter, release, reserve } from '#lib/tenancy/dynamo-storage-usage-store';
import type { AutomationUsageStore } from './automation-quotas.ts';

const DAY_SECONDS = 86_400;
/** A client has at most its in-flight quota of executions at once: one page of them. */
const MAX_FLIGHTS_READ = 1000;

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

/** The counters are the storage quotas' (one conditional UpdateItem each); flights are items of their own. */
export const dynamoAutomationUsage: AutomationUsageStore = {
  countRuns: (clientId, window, runs, limit, expiresAt) =>
    reserve(runsCounter(clientId, window, expiresAt), runs, limit, new Date().toISOString()),
  uncountRuns: async (clientId, window, runs) => {
    await release(runsCounter(clientId, window), runs, new Date().toISOString());
  },

  runsInFlight: async (clientId, now) => {
    const { Items } = await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: {
          ':pk': automationFlightEntity.keys.pk.render({ clientId }),
          ':prefix': automationFlightEntity.keys.sk.prefix,
        },
        Limit: MAX_FLIGHTS_READ,
        ConsistentRead: true,
      }),
    );
    return (Items ?? [])
      .map(automationFlightEntity.fromItem)
      .filter((flight) => flight.until > now.toISOString())
      .reduce((sum, flight) => sum + flight.runs, 0);
  },

  startFlight: async (clientId, executionName, runs, until) => {
    const at = new Date().toISOString();
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: automationFlightEntity.toItem({
          clientId,
          executionName,
          runs,
          until: until.toISOString(),
          expiration: Math.ceil(until.getTime() / 1000) + DAY_SECONDS,
          version: 1,
          createdAt: at,
          updatedAt: at,
        }),
      }),
    );
  },

  endFlight: async (clientId, executionName) => {
    await dynamo.send(
      new DeleteCommand({ TableName: tableName(), Key: automationFlightEntity.key({ clientId, executionName }) }),
    );
  },
};
