import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { dynamoPayerConnectionStore } from './dynamo-payer-connection-store.ts';
import { payerConnectionService } from './payer-connections.ts';

/**
 * The payer-connection service on DynamoDB, with the configured cursor keys, built once per cold start.
 * Tests with other stores or clocks use payerConnectionService.
 */
export const payerConnections = payerConnectionService({
  store: dynamoPayerConnectionStore,
  endpoints: dynamoPayerEndpointStore,
  tenants: dynamoTenantStore,
  quotas: dynamoStorageQuotas,
});
