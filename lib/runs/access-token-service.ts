import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { accessTokenService } from './runs.ts';
import { scraperTokens } from './scraper-token.ts';

/**
 * Issuing scraper tokens on DynamoDB with the configured token key, built once per cold start: what the
 * token route uses, so its bundle carries no screenshots' S3 client or presigner (scraper-access-service.ts,
 * for the session, has them).
 */
export const accessTokens = accessTokenService({
  requests: dynamoRequestStore,
  tenants: dynamoTenantStore,
  tokens: scraperTokens(),
});
