import { mkdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventDelivery } from '#lib/events/event-delivery';
import type { OutboxRelay } from '#lib/events/relay';
import { localEnvironment, type StackSettings, setFunctionEnvironment, stackSettingsOf } from './config.ts';
import { type Emulator, type S3Emulator, startDynalite, startS3rver } from './emulators.ts';
import type { HandlerLoader } from './gateway/invoke.ts';
import { enableInvocationContexts, ownInvocation } from './invocations.ts';
import { type LocalLambda, startLambda } from './lambda.ts';
import { type PasPayer, type PasPayerOptions, startPasPayer } from './pas-payer/server.ts';
import type { PayerSubscriptionTimer } from './payer-subscriptions.ts';
import type { RecheckTimer } from './rechecks.ts';
import { relayS3Events } from './s3-events.ts';
import { type SandboxPortal, type SandboxPortalOptions, startSandboxPortal } from './sandbox-portal/server.ts';
import { type LocalStepFunctions, type StepFunctionsOptions, startStepFunctions } from './step-functions.ts';
import { dropTable, ensureTable, localCredentials } from './table.ts';
import type { ClientLimits } from './throttle.ts';

/**
 * The whole product on one machine: embedded DynamoDB and S3 (unless DYNAMODB_ENDPOINT /
 * S3_ENDPOINT point elsewhere), the table and bucket the CDK stack would create, and the local
 * gateway serving the route table. Handlers are imported only after the environment is set,
 * because their SDK clients read endpoints once, at module scope.
 */
export interface LocalStackOptions {
  port?: number;
  host?: string;
  /** Where state lives; `undefined` keeps DynamoDB in memory and S3 in a throw-away directory. */
  stateDir?: string;
  /** Start from empty state: wipe stateDir, and on an external DynamoDB drop and recreate the table. */
  clean?: boolean;
  dynamoEndpoint?: string;
  s3Endpoint?: string;
  tableName?: string;
  bucketName?: string;
  /** The sandbox payer portal's options (port, seed, hang paths); it always runs, on loopback. */
  sandboxPortal?: SandboxPortalOptions;
  /** The local PAS payer's options (port, token lifetime, clients); it always runs beside the portal. */
  pasPayer?: PasPayerOptions;
  /**
   * Requests per second, burst and daily quota of a client without its own: by default the deployed
   * default's, unless LOCAL_RATE_LIMIT, LOCAL_BURST_LIMIT, LOCAL_QUOTA_PER_DAY say otherwise. The test
   * suite and the load benchmarks raise them here: their default clients send far more than a client may.
   */
  defaultLimits?: ClientLimits;
  /** Shorter Task timeouts and retry waits, another browser bound, for the local Step Functions (tests). */
  stepFunctions?: Pick<StepFunctionsOptions, 'definitionOptions' | 'retryIntervalMs' | 'browserConcurrency'>;
  /**
   * The outbox relay (docs/events.md): where it hands events (by default to webhook delivery) and how often
   * it polls (default LOCAL_OUTBOX_RELAY_INTERVAL_MS, else 250 ms).
   */
  events?: { delivery?: EventDelivery; pollIntervalMs?: number };
  /** The re-check timer's period (default RECHECK_EVERY_SECONDS, docs/rechecks.md). */
  rechecks?: { intervalMs?: number };
}

export interface LocalStack {
  baseUrl: string;
  /** The environment the handlers run with; the admin CLI and tests reuse it. */
  env: Record<string, string>;
  s3?: S3Emulator;
  /** The sandbox payer portal the automation drives. */
  portal: SandboxPortal;
  /** The local PAS payer: the payer-API channel's counterpart (docs/pas-payer.md). */
  pasPayer: PasPayer;
  stepFunctions: LocalStepFunctions;
  /** The functions other functions invoke (the run credentials function), behind the Lambda Invoke API. */
  lambda: LocalLambda;
  /** Hands the outbox's events to delivery, as the table's stream and EventBridge do on AWS. */
  relay: OutboxRelay;
  /** Runs the scheduled re-checks' state machine, as EventBridge Scheduler does on AWS. */
  rechecks: RecheckTimer;
  /** The PAS subscription keeper's timer (local/payer-subscriptions.ts). */
  payerSubscriptions: PayerSubscriptionTimer;
  close(): Promise<void>;
}

/** DynamoDB and S3: the embedded emulators, unless the options point at others. */
async function startStorage(options: LocalStackOptions, scratch: string, bucketName: string) {
  const emulators: Emulator[] = [];
  let dynamoEndpoint = options.dynamoEndpoint;
  if (!dynamoEndpoint) {
    const db = await startDynalite(options.stateDir ? { path: join(options.stateDir, 'dynamodb') } : {});
    emulators.push(db);
    dynamoEndpoint = db.endpoint;
  }
  let s3: S3Emulator | undefined;
  let s3Endpoint = options.s3Endpoint;
  if (!s3Endpoint) {
    s3 = await startS3rver({ directory: join(scratch, 's3'), buckets: [bucketName] });
    emulators.push(s3);
    s3Endpoint = s3.endpoint;
  }
  return { emulators, dynamoEndpoint, s3, s3Endpoint };
}

/** The table, emptied on an external DynamoDB for a clean start; a kept or re-created one gets its index items back. */
async function prepareTable(options: LocalStackOptions, dynamoEndpoint: string, tableName: string) {
  // The embedded dynalite starts empty with stateDir; an external DynamoDB keeps the table, so empty it there.
  if (options.clean && options.dynamoEndpoint) await dropTable(dynamoEndpoint, tableName);
  await ensureTable(dynamoEndpoint, tableName);
  // A kept (or re-created) table may hold accounts written before an index or before the search index's entries:
  // the backfill brings them up to date (a new table: one Scan of nothing).
  const { backfillPortalAccountIndexes } = await import('#lib/portal-accounts/dynamo-portal-account-store');
  await backfillPortalAccountIndexes();
  // And its clients and outbox items written before replay-events' indexes (docs/events.md, "Replaying events").
  const { backfillReplayIndexes } = await import('#lib/events/dynamo-replay-indexes');
  await backfillReplayIndexes();
}

/** Each handler module imported once, on first use, each invocation in a context of its own. */
function handlerLoader(): HandlerLoader {
  const loaded = new Map<string, ReturnType<HandlerLoader>>();
  return (module) => {
    if (!loaded.has(module)) {
      // A computed URL (not a template literal) so Vite's dynamic-import rewriting leaves it alone in tests.
      const url = new URL(`../functions/${module}.ts`, import.meta.url).href;
      loaded.set(
        module,
        import(/* @vite-ignore */ url).then((m) => ownInvocation(m.handler, module)),
      );
    }
    return loaded.get(module)!;
  };
}

/**
 * The payer portal, Step Functions and Lambda, reached like DynamoDB and S3 through endpoints in the
 * functions' environment, set before any handler's module (and so its SDK client) is loaded.
 */
async function startAutomation(options: LocalStackOptions, loadHandler: HandlerLoader, env: Record<string, string>) {
  const { invokedFunctions } = await import('#lib/routes/automation-tasks');
  const host = options.host ?? '127.0.0.1';
  const portal = await startSandboxPortal({ host, ...options.sandboxPortal });
  const pasPayer = await startPasPayer({ host, ...options.pasPayer });
  const stepFunctions = await startStepFunctions({ loadHandler, ...options.stepFunctions });
  const lambda = await startLambda({ functions: invokedFunctions, loadHandler, host });
  // The operators' tokens go with the URLs: tests and scripts decide pended authorizations with them
  // (docs/sandbox-portal.md, docs/pas-payer.md).
  Object.assign(
    env,
    { SANDBOX_PORTAL_URL: portal.url, SANDBOX_OPERATOR_TOKEN: portal.operatorToken },
    {
      PAS_PAYER_URL: pasPayer.url,
      PAS_PAYER_FHIR_BASE_URL: pasPayer.fhirBaseUrl,
      PAS_PAYER_TOKEN_URL: pasPayer.tokenUrl,
      PAS_PAYER_OPERATOR_TOKEN: pasPayer.operatorToken,
    },
    stepFunctions.env,
    lambda.env,
  );
  setFunctionEnvironment(env);
  // The stand-in starts with no executions: runs an earlier start left unended are lost (lost-runs.ts).
  const { endLostRuns } = await import('./lost-runs.ts');
  await endLostRuns();
  return { portal, pasPayer, stepFunctions, lambda };
}

/** No stream on dynalite: the relay reads the outbox items the writes left (docs/events.md). */
async function startEventRelay(options: LocalStackOptions, settings: StackSettings) {
  const { startOutboxRelay } = await import('#lib/events/relay');
  const { dynamoOutboxStore } = await import('#lib/events/dynamo-outbox-store');
  const { deliverEvent } = await import('#lib/webhooks/delivery-service');
  const pollIntervalMs = options.events?.pollIntervalMs ?? settings.relayIntervalMs;
  return startOutboxRelay({
    outbox: dynamoOutboxStore,
    // Locally the relay hands each event to webhook delivery itself; on AWS a queue's function will (docs/events.md).
    delivery: options.events?.delivery ?? {
      deliver: async (event) => {
        await deliverEvent(event);
      },
    },
    ...(pollIntervalMs ? { pollIntervalMs } : {}),
  });
}

/** The local gateway serving the route table, listening. */
async function startGateway(options: LocalStackOptions, settings: StackSettings, loadHandler: HandlerLoader) {
  const { routes } = await import('#lib/routes/route-table');
  const { createGateway } = await import('./gateway.ts');
  const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
  const { cachedClientLimits } = await import('./throttle.ts');
  const server: Server = createGateway({
    routes,
    loadHandler,
    defaultLimits: options.defaultLimits ?? settings.defaultLimits,
    clientLimits: cachedClientLimits(dynamoTenantStore),
    authorizerCacheTtlSeconds: settings.authorizerCacheTtlSeconds,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, options.host ?? '127.0.0.1', resolve);
  });
  return server;
}

/** The PAS subscriptions' keeper on a timer; payers notify this gateway (docs/payer-api.md, "Subscriptions"). */
async function startPayerSubscriptions(env: Record<string, string>, baseUrl: string, loadHandler: HandlerLoader) {
  env.PUBLIC_API_BASE_URL = baseUrl;
  setFunctionEnvironment({ PUBLIC_API_BASE_URL: baseUrl });
  const { startPayerSubscriptionTimer } = await import('./payer-subscriptions.ts');
  return startPayerSubscriptionTimer(loadHandler);
}

export const startLocalStack = async (options: LocalStackOptions = {}): Promise<LocalStack> => {
  // Before the first SDK request: every function runs in this process, each invocation in its own context.
  await enableInvocationContexts();
  // The stack's own variables, checked before anything starts (one error names every bad one).
  const settings = stackSettingsOf(localEnvironment());
  if (settings.tableGrants === 'enforce') (await import('./table-grants.ts')).enforceTableGrants();
  const tableName = options.tableName ?? 'service-review';
  const bucketName = options.bucketName ?? 'service-review-attachments';
  const stateDir = options.stateDir;
  if (stateDir && options.clean) rmSync(stateDir, { recursive: true, force: true });
  const scratch = stateDir ?? join(tmpdir(), `service-review-${process.pid}-${Date.now()}`);
  mkdirSync(scratch, { recursive: true });
  const { emulators, dynamoEndpoint, s3, s3Endpoint } = await startStorage(options, scratch, bucketName);
  const env: Record<string, string> = {
    ...localCredentials,
    TABLE_NAME: tableName,
    BUCKET_NAME: bucketName,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_ENDPOINT_URL_S3: s3Endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    // s3rver neither checks x-amz-checksum-sha256 nor keeps it: the verifier streams objects instead.
    S3_VERIFIES_CHECKSUMS: 'false',
    LOCAL_STATE_DIR: scratch,
    // Webhooks may go to http and loopback here, so a developer receives on their machine (docs/webhooks.md).
    WEBHOOK_URL_POLICY: 'local',
    // Payer URLs may be http on loopback here: the local PAS payer (lib/payer-api/payer-url-policy.ts).
    PAYER_URL_POLICY: 'local',
  };
  // Explicit values win over whatever the shell had, so a developer's AWS profile is never used by accident.
  setFunctionEnvironment(env);
  await prepareTable(options, dynamoEndpoint, tableName);
  const loadHandler = handlerLoader();
  const { portal, pasPayer, stepFunctions, lambda } = await startAutomation(options, loadHandler, env);
  const relay = await startEventRelay(options, settings);
  const { eventFunctions } = await import('#lib/routes/event-functions');
  const invocations = s3 ? relayS3Events(s3, bucketName, eventFunctions, loadHandler) : new Set<Promise<unknown>>();
  // Webhook retries: the due-deliveries timer (local/webhook-deliveries.ts).
  const { startWebhookTimer } = await import('./webhook-deliveries.ts');
  const webhookTimer = await startWebhookTimer(settings.webhookSweepMs);
  // Scheduled re-checks: the DueRechecks state machine on a timer (local/rechecks.ts).
  const { startRecheckTimer } = await import('./rechecks.ts');
  const rechecks = startRecheckTimer(loadHandler, options.rechecks?.intervalMs);
  const server = await startGateway(options, settings, loadHandler);
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const payerSubscriptions = await startPayerSubscriptions(env, baseUrl, loadHandler);

  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...invocations]);
    await webhookTimer.close();
    await rechecks.close();
    await payerSubscriptions.close();
    await stepFunctions.close();
    await lambda.close();
    // The browser workers' shared Chromium (lib/portal/warm-browser.ts), once no task uses it.
    const { closeWarmBrowsers } = await import('#lib/portal/warm-browser');
    await closeWarmBrowsers();
    // After the last writes, before the table goes; a poll under way finishes first.
    await relay.close();
    // The table before the portal: a task its aborted execution left running must not record what
    // the portal's closing does to it (the run is lost, and the next start says so).
    for (const emulator of emulators.reverse()) await emulator.close();
    await portal.close();
    await pasPayer.close();
    if (!stateDir) rmSync(scratch, { recursive: true, force: true });
  };
  const timers = { rechecks, payerSubscriptions };
  return { baseUrl, env, ...(s3 ? { s3 } : {}), portal, pasPayer, stepFunctions, lambda, relay, ...timers, close };
};
