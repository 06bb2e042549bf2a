import { onLambda } from '#lib/config/runtime';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { recheckSettingsOf } from '#lib/rechecks/recheck-settings';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { flightLandings } from '#lib/runs/automation-quotas';
import { dynamoAutomationUsage } from '#lib/runs/dynamo-automation-usage';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { s3ScreenshotStorage } from '#lib/runs/s3-screenshot-storage';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { closeBrowser, launchBrowser } from './browser.ts';
import { driverFor, portalBaseUrl } from './drivers/registry.ts';
import { dynamoAccountLeases } from './dynamo-account-lease.ts';
import { lambdaCredentialsSource } from './lambda-credentials-source.ts';
import { priorAuthorizationFormOf } from './prior-authorization-form.ts';
import { closeOnSigterm, warmBrowser } from './warm-browser.ts';
import { rpaWorker } from './worker.ts';

/**
 * The automation's task handlers on DynamoDB and S3, with headless Chromium and the registered
 * portal drivers, built once per cold start (the API functions use service.ts and bundle none of
 * this). Credentials come from the run credentials function through Lambda: no Encryption SDK here.
 * Tests with a test driver use rpaWorker. One Chromium per execution environment (one per process
 * locally, shared by both browser functions and closed by local/stack.ts), launched on the first visit
 * and kept while warm; each visit works in a context of its own (warm-browser.ts).
 */
const browsers = warmBrowser({ launch: () => launchBrowser(), close: (browser) => closeBrowser(browser) });
if (onLambda()) closeOnSigterm();

export const worker = rpaWorker({
  runs: dynamoRunStore,
  requests: dynamoRequestStore,
  accounts: dynamoPortalAccountStore,
  leases: dynamoAccountLeases(),
  flights: flightLandings(dynamoAutomationUsage),
  openCredentials: (request) => lambdaCredentialsSource.issue(request),
  acquireBrowser: () => browsers.acquire(),
  releaseBrowser: (browser) => browsers.release(browser),
  driverFor,
  portalBaseUrl: (portalId) => portalBaseUrl(portalId),
  formOf: priorAuthorizationFormOf,
  screenshots: s3ScreenshotStorage,
  // The client's settings alone: IAM lets these functions read no more of a client's own partition.
  recheckSettings: recheckSettingsOf({ getClient: dynamoTenantStore.getClientSettings }),
});
