import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { dynamoAuthorizationHistoryStore } from '#lib/requests/dynamo-authorization-history-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { isAutomatedPortal } from './automated-portals.ts';
import { automationQuotas } from './automation-quotas.ts';
import { dynamoAutomationUsage } from './dynamo-automation-usage.ts';
import { dynamoRunStore } from './dynamo-run-store.ts';
import { rpaService } from './rpa.ts';
import { s3ScreenshotStorage } from './s3-screenshot-storage.ts';
import { scraperTokens } from './scraper-token.ts';
import { sfnAutomationStarter } from './sfn-automation-starter.ts';

/**
 * The automation's API service on DynamoDB, S3 and Step Functions, with the configured token key,
 * built once per cold start. Tests with another AutomationStarter use rpaService.
 */
export const rpa = rpaService({
  runs: dynamoRunStore,
  requests: dynamoRequestStore,
  accounts: dynamoPortalAccountStore,
  automated: isAutomatedPortal,
  tenants: dynamoTenantStore,
  automation: sfnAutomationStarter,
  quotas: automationQuotas({ usage: dynamoAutomationUsage, tenants: dynamoTenantStore }),
  screenshots: s3ScreenshotStorage,
  history: dynamoAuthorizationHistoryStore,
  tokens: scraperTokens(),
});
