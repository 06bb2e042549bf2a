import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { isAutomatedPortal } from './automated-portals.ts';
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
  screenshots: s3ScreenshotStorage,
  tokens: scraperTokens(),
});
