import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { dynamoPortalAccountStore } from './dynamo-portal-account-store.ts';
import { portalAccountService } from './portal-accounts.ts';
import { credentialSealer } from './seal-credentials.ts';

/**
 * The portal-account service of the functions that seal secrets (create and replace): service.ts
 * plus the configured secrets keyring, and with it the AWS Encryption SDK (docs/security.md).
 */
export const portalAccountsWithSecrets = portalAccountService({
  store: dynamoPortalAccountStore,
  tenants: dynamoTenantStore,
  quotas: dynamoStorageQuotas,
  sealer: credentialSealer(),
});
