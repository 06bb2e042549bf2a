import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { payerDirectoryOf } from '#lib/payer-connections/payer-directory';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { isAutomatedPortal } from '#lib/portal/automated-portals';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { automationQuotas } from './automation-quotas.ts';
import { dynamoAutomationUsage } from './dynamo-automation-usage.ts';
import { dynamoRunStore } from './dynamo-run-store.ts';
import { runStartService } from './runs.ts';
import { sfnAutomationStarter } from './sfn-automation-starter.ts';

/**
 * Starting runs and batches on DynamoDB and Step Functions, built once per cold start: what the start
 * routes and the re-checks use, so their bundles carry neither the scraper token's key (jose, Secrets
 * Manager) nor the screenshots' S3 client (scraper-access-service.ts wires those).
 */
export const runStarts = runStartService({
  runs: dynamoRunStore,
  requests: dynamoRequestStore,
  accounts: dynamoPortalAccountStore,
  automated: isAutomatedPortal,
  payers: payerDirectoryOf(dynamoPayerEndpointStore, dynamoPayerConnectionStore),
  attachments: dynamoAttachmentStore,
  tenants: dynamoTenantStore,
  automation: sfnAutomationStarter,
  quotas: automationQuotas({ usage: dynamoAutomationUsage, tenants: dynamoTenantStore }),
});
