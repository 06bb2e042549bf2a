import { dynamoStorageUsageStore } from './dynamo-storage-usage-store.ts';
import { dynamoTenantStore } from './dynamo-tenant-store.ts';
import { storageQuotas } from './storage-quotas.ts';

/** The storage quotas on DynamoDB, built once per cold start. */
export const dynamoStorageQuotas = storageQuotas({ usage: dynamoStorageUsageStore, tenants: dynamoTenantStore });
