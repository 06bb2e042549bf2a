import { dynamoAuthorizationHistoryStore } from '#lib/requests/dynamo-authorization-history-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { dynamoRunStore } from './dynamo-run-store.ts';
import { scraperAccessService } from './runs.ts';
import { s3ScreenshotStorage } from './s3-screenshot-storage.ts';
import { scraperTokens } from './scraper-token.ts';

/**
 * The scraper's token and session on DynamoDB and S3 (screenshot links), with the configured token key,
 * built once per cold start: what the two scraper routes use. Like run-read-service.ts and
 * run-start-service.ts, it wires only what its use cases read: no Step Functions client. Tests with other
 * adapters use rpa.ts's services.
 */
export const scraperAccess = scraperAccessService({
  runs: dynamoRunStore,
  requests: dynamoRequestStore,
  tenants: dynamoTenantStore,
  screenshots: s3ScreenshotStorage,
  history: dynamoAuthorizationHistoryStore,
  tokens: scraperTokens(),
});
