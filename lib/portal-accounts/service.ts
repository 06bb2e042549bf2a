import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { dynamoPortalAccountStore } from './dynamo-portal-account-store.ts';
import { portalAccountService } from './portal-accounts.ts';

/**
 * The portal-account service on DynamoDB, with the configured cursor keys, built once per cold
 * start: for the functions that read, list and delete. The ones that write secrets (create,
 * replace) use service-with-secrets.ts, so that only they bundle the Encryption SDK. Tests with
 * other stores or limits use portalAccountService.
 */
export const portalAccounts = portalAccountService({
  store: dynamoPortalAccountStore,
  tenants: dynamoTenantStore,
  quotas: dynamoStorageQuotas,
});
