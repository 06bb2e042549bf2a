import { authenticate } from './authentication.ts';
import { dynamoTenantStore } from './dynamo-tenant-store.ts';

/**
 * The authorizer's ready service on DynamoDB, built once per cold start: the key an x-api-key value
 * stands for (authentication.ts), and the client's usage identifier for API Gateway's usage plan.
 */
export const apiKeys = {
  authenticate: (presented: string | undefined) => authenticate(dynamoTenantStore, presented),
  usageIdentifierKeyOf: (clientId: string) => dynamoTenantStore.getUsageIdentifierKey(clientId),
};
