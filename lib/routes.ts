/**
 * The route table: the single source of truth for the API. The CDK stack (infra/) creates one
 * Lambda function and one API Gateway method per row; the local gateway (local/) serves the same
 * rows with the same handlers. Adding an endpoint starts with a row here: every step is listed in
 * docs/architecture.md, "Adding … An endpoint".
 * It is data, not code: it lives in lib/ so that functions/, infra/, local/ and lib/http (Location
 * and Deprecation headers) all depend on it, and nothing in lib/ depends on functions/.
 *
 * API Gateway allows one variable name per path level, so a level shared by several routes uses
 * one name: `{externalId}` under v1.1/Requests (the spec's `{requestExternalId}` of attachments is
 * the same URL segment) and under Portals/accounts (where the list route's segment is the
 * clientUserId). Names are internal; the URLs are exactly the spec's.
 */
import type { IndexName } from '#lib/table';

type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * DynamoDB actions on the service table. Each row lists exactly the calls its handler's stores make
 * (the table of docs/infrastructure.md derives every row): GetItem (every `get`), BatchGetItem (the
 * RPA runs of a batch, the portal accounts of a payer), Query (a key's items: attachments of a request, runs of a request), PutItem
 * (conditional puts: creates and versioned updates), UpdateItem (in-place updates, attachment slots),
 * DeleteItem (attachments, portal accounts). Idempotent POSTs add Powertools' record calls: GetItem,
 * PutItem, UpdateItem, DeleteItem.
 */
export type TableAction = 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem';

export interface TableAccess {
  /** On the table's own items. */
  actions: readonly TableAction[];
  /** Query on these indexes (portal accounts: by organization, portal, payer, status; docs/data-model.md). */
  queryIndexes?: readonly IndexName[];
  /** Only items whose partition key matches one of these patterns (`dynamodb:LeadingKeys`). */
  leadingKeys?: readonly string[];
}

/** The actions that write: with them, DynamoDB also needs the data key to encrypt. */
export const TABLE_WRITE_ACTIONS: readonly TableAction[] = ['PutItem', 'UpdateItem', 'DeleteItem'];

/** What a route's function may touch; the CDK construct turns this into least-privilege grants. */
export interface RouteAccess {
  table?: TableAccess;
  /** S3 actions on the client's prefix of the attachments bucket. */
  bucket?: Array<'read' | 'write' | 'delete' | 'presign'>;
  /**
   * Envelope encryption of portal-account secrets: `encrypt` where they are written; `decrypt` for
   * the run credentials function alone (`invokedFunctions`), never for a route or a browser worker.
   */
  secrets?: 'encrypt' | 'decrypt';
  /** Signing and verifying pagination cursors (reads the cursor signing secret). */
  cursors?: 'sign';
  /** S3 actions on RPA screenshots (`<clientId>/rpa/…` objects of the attachments bucket). */
  screenshots?: Array<'read' | 'write'>;
  /**
   * The automation's state machines (lib/rpa/state-machines.ts): `start` starts executions and
   * describes them, `read` only describes them.
   */
  automation?: 'start' | 'read';
  /** Signing or verifying scraper-session tokens (reads the RPA token secret: HMAC, either needs the key). */
  rpaTokens?: 'sign' | 'verify';
  /**
   * Keying the request fingerprints of idempotency records (reads the idempotency fingerprint secret:
   * lib/http/request-fingerprint.ts). Every idempotent POST, with IDEMPOTENT's table actions.
   */
  requestFingerprints?: 'sign';
  /**
   * Functions of `invokedFunctions` it calls synchronously (`lambda:InvokeFunction` on each one's ARN
   * alone; its name in the function's `environment` variable): the browser workers ask the run
   * credentials function for one run's credentials instead of decrypting them.
   */
  invoke?: readonly InvokedFunctionName[];
  /**
   * Opening webhook signing secrets to sign deliveries (the webhook delivery functions alone):
   * `kms:Decrypt` on the secrets key only for the `webhook-signing-secret` purpose of their encryption
   * context (lib/webhooks/signing-secrets.ts), never a portal-account secret; the role is one the key's
   * own policy names.
   */
  webhookSecrets?: 'open';
}

/** What an audit record names as the thing accessed (docs/security.md, "Audit trail"). */
type AuditResource =
  | 'request'
  | 'attachment'
  | 'portalAccount'
  | 'rpaAccessToken'
  | 'rpaSession'
  | 'rpaRun'
  | 'rpaBatch'
  | 'webhook'
  | 'webhookDelivery';

/**
 * How a call of a route is audited (lib/http/audit.ts): an intent and an outcome record per call, with
 * ids only, never a body value other than the ids named here.
 */
export interface RouteAudit {
  /** `<resource>.<verb>`, e.g. `attachment.download`. */
  action: string;
  resource: AuditResource;
  /** Path variables that identify the resource (or its parents): `{ variable: idName }`. */
  ids?: Record<string, string>;
  /** Where the client user id is: a path variable, or the body's `clientUserId`. */
  clientUserId?: { path: string } | 'body';
  /** Body fields that hold arrays of ids (the batch's requestExternalIds): `{ field: idName }`. */
  bodyIds?: Record<string, string>;
  /** Creates and starts: the new resource's id, the last segment of the response's Location. */
  createdId?: string;
}

export interface Route {
  method: HttpMethod;
  path: string;
  /** Module under functions/, without extension; it exports `handler`. */
  handler: string;
  access: RouteAccess;
  /** Every call is audited, except on routes that touch no PHI nor credentials (`false`: the schemas, the API's description). */
  audit: RouteAudit | false;
  /** Obsolete routes answer with Deprecation/Sunset/Link headers pointing to the successor. */
  successor?: string;
  /**
   * Who may call it; by default an API client (x-api-key, through the authorizer). `scraper-token`:
   * the gateway lets every call through to the handler, which verifies the scraper token itself.
   * `public`: anyone, no credential (the API's own description: docs/security.md).
   */
  auth?: 'scraper-token' | 'public';
  /**
   * Files the function reads at run time, shipped beside its bundle rather than inside it:
   * `{ fileName: path from the project root }` (the OpenAPI document, the API reference's renderer: a
   * generated document and MBs of JavaScript that would break the bundle budget).
   */
  assets?: Readonly<Record<string, string>>;
}

/**
 * Powertools' idempotency records (lib/http/idempotency.ts): get, put, update, delete one record; an
 * idempotent route also reads the key of their request fingerprints (`requestFingerprints`).
 */
const IDEMPOTENT: readonly TableAction[] = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'];

/** The actions of `lists`, once each, in the order of TableAction. */
const tableActions = (...lists: ReadonlyArray<readonly TableAction[]>): TableAction[] => {
  const all = new Set(lists.flat());
  return (['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'] as const).filter((action) =>
    all.has(action),
  );
};

/** The filter's key conditions: organization, portal or payer, status, portal and status (dynamo-portal-account-store.ts). */
const PORTAL_ACCOUNT_FILTER_INDEXES: readonly IndexName[] = ['gsi1', 'gsi2', 'gsi3', 'gsi4'];

const api = '/api/external';
const v1 = `${api}/v1`;
const v11 = `${api}/v1.1`;

/** The OpenAPI document's file: generated by the build (docs/openapi.md), shipped beside its function's bundle. */
export const OPENAPI_DOCUMENT = 'openapi.json';
/**
 * The renderer of the API reference page (Scalar's standalone script), by its file name beside the page;
 * taken out of the pinned npm tarball by the build (scripts/fetch-api-reference.ts).
 */
export const API_REFERENCE_SCRIPT = 'api-reference.js';

/**
 * Portal accounts. Secrets are encrypted where they are written (`secrets: 'encrypt'`).
 * The list route's `{externalId}` segment carries the clientUserId (see the header comment).
 */
const portalAccountRoutes: Route[] = [
  {
    method: 'POST',
    path: `${v11}/Portals/accounts`,
    handler: 'portal-accounts/create-portal-account',
    access: {
      table: { actions: tableActions(['GetItem', 'PutItem'], IDEMPOTENT) },
      secrets: 'encrypt',
      requestFingerprints: 'sign',
    },
    audit: {
      action: 'portalAccount.create',
      resource: 'portalAccount',
      clientUserId: 'body',
      createdId: 'portalAccountExternalId',
    },
  },
  {
    method: 'GET',
    path: `${v11}/Portals/accounts/{externalId}/list`,
    handler: 'portal-accounts/list-portal-accounts',
    access: { table: { actions: ['GetItem'], queryIndexes: ['gsi1'] }, cursors: 'sign' },
    audit: { action: 'portalAccount.list', resource: 'portalAccount', clientUserId: { path: 'externalId' } },
  },
  {
    method: 'GET',
    path: `${v11}/Portals/accounts/{externalId}`,
    handler: 'portal-accounts/get-portal-account',
    access: { table: { actions: ['GetItem'] } },
    audit: { action: 'portalAccount.read', resource: 'portalAccount', ids: { externalId: 'portalAccountExternalId' } },
  },
  {
    method: 'PUT',
    path: `${v11}/Portals/accounts/{externalId}`,
    handler: 'portal-accounts/replace-portal-account',
    // UpdateItem: the organizations' portal-account counts, when an account moves (storage quotas).
    // DeleteItem: the payer index entries of payers the replacement drops.
    access: { table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] }, secrets: 'encrypt' },
    audit: {
      action: 'portalAccount.replace',
      resource: 'portalAccount',
      ids: { externalId: 'portalAccountExternalId' },
      clientUserId: 'body',
    },
  },
  {
    method: 'DELETE',
    path: `${v11}/Portals/accounts/{externalId}`,
    handler: 'portal-accounts/delete-portal-account',
    access: { table: { actions: ['GetItem', 'UpdateItem', 'DeleteItem'] } },
    audit: {
      action: 'portalAccount.delete',
      resource: 'portalAccount',
      ids: { externalId: 'portalAccountExternalId' },
    },
  },
  {
    method: 'POST',
    path: `${v11}/Portals/accounts/filter`,
    handler: 'portal-accounts/filter-portal-accounts',
    // BatchGetItem: a filter by payer reads the accounts its payer index entries name.
    access: {
      table: { actions: ['GetItem', 'BatchGetItem'], queryIndexes: PORTAL_ACCOUNT_FILTER_INDEXES },
      cursors: 'sign',
    },
    audit: { action: 'portalAccount.filter', resource: 'portalAccount', clientUserId: 'body' },
  },
];

const serviceReviews = `${v1}/ServiceReviews/requests`;

/**
 * A start chooses each run's portal account (lib/rpa/portal-account-choice.ts): a named account
 * (GetItem), the payer's accounts (their payer index entries on gsi2, then BatchGetItem), the
 * organization's active accounts (gsi3).
 */
const CHOOSE_ACCOUNT: readonly TableAction[] = ['GetItem', 'BatchGetItem'];
const CHOOSE_ACCOUNT_INDEXES: readonly IndexName[] = ['gsi2', 'gsi3'];
/**
 * The client's automation quotas (lib/rpa/automation-quotas.ts): its runs in flight (Query of its
 * flight items), the hour's and the day's counts (UpdateItem), the flight put, and taken back when the
 * execution could not be started (DeleteItem).
 */
const AUTOMATION_QUOTAS: readonly TableAction[] = ['Query', 'PutItem', 'UpdateItem', 'DeleteItem'];

/** Both starts: choose the accounts, admit the runs, store them, start the execution; idempotent. */
const START_AUTOMATION: RouteAccess = {
  table: { actions: tableActions(CHOOSE_ACCOUNT, AUTOMATION_QUOTAS, IDEMPOTENT), queryIndexes: CHOOSE_ACCOUNT_INDEXES },
  automation: 'start',
  requestFingerprints: 'sign',
};

/**
 * Service-review automation. The session is read with a scraper token, not an API key; its
 * screenshots are shown through presigned URLs (`screenshots: ['read']`). Starting a run or a
 * batch also describes executions, reading one settles a run whose execution ended unrecorded.
 */
const rpaRoutes: Route[] = [
  {
    method: 'POST',
    path: `${serviceReviews}/{requestExternalId}/rpa`,
    handler: 'rpa/issue-rpa-access-token',
    access: { table: { actions: ['GetItem'] }, rpaTokens: 'sign' },
    audit: {
      action: 'rpa.accessToken.issue',
      resource: 'rpaAccessToken',
      ids: { requestExternalId: 'requestExternalId' },
      clientUserId: 'body',
    },
  },
  {
    method: 'GET',
    path: `${serviceReviews}/{requestExternalId}/rpa/session`,
    handler: 'rpa/get-scraper-session',
    // gsi1: the token's API key by its id (is it still active?), read with every call.
    access: {
      table: { actions: ['GetItem', 'Query'], queryIndexes: ['gsi1'] },
      rpaTokens: 'verify',
      screenshots: ['read'],
    },
    audit: { action: 'rpa.session.read', resource: 'rpaSession', ids: { requestExternalId: 'requestExternalId' } },
    auth: 'scraper-token',
  },
  {
    method: 'POST',
    path: `${serviceReviews}/{requestExternalId}/rpa/view-on-page`,
    handler: 'rpa/start-view-on-page',
    access: START_AUTOMATION,
    audit: {
      action: 'rpa.viewOnPage.start',
      resource: 'rpaRun',
      ids: { requestExternalId: 'requestExternalId' },
      clientUserId: 'body',
      createdId: 'runId',
    },
  },
  {
    method: 'GET',
    path: `${serviceReviews}/{requestExternalId}/rpa/runs/{runId}`,
    handler: 'rpa/get-rpa-run',
    // PutItem: a run its execution left unended (ended, or gone) is failed when read (docs/rpa.md).
    access: { table: { actions: ['GetItem', 'PutItem'] }, automation: 'read' },
    audit: {
      action: 'rpa.run.read',
      resource: 'rpaRun',
      ids: { requestExternalId: 'requestExternalId', runId: 'runId' },
    },
  },
  {
    method: 'POST',
    path: `${serviceReviews}/rpa/batch/check-auth-status`,
    handler: 'rpa/start-check-auth-status',
    access: START_AUTOMATION,
    audit: {
      action: 'rpa.checkAuthStatus.start',
      resource: 'rpaBatch',
      clientUserId: 'body',
      bodyIds: { requestExternalIds: 'requestExternalIds' },
      createdId: 'batchId',
    },
  },
  {
    method: 'GET',
    path: `${serviceReviews}/rpa/batch/check-auth-status/{batchId}`,
    handler: 'rpa/get-check-auth-status',
    // PutItem: a batch its execution left open (ended, or gone) is closed when read, its unended runs failed.
    access: { table: { actions: ['GetItem', 'BatchGetItem', 'PutItem'] }, automation: 'read' },
    audit: { action: 'rpa.checkAuthStatus.read', resource: 'rpaBatch', ids: { batchId: 'batchId' } },
  },
];

/**
 * Webhook subscriptions and their deliveries (docs/webhooks.md). Create and rotate-secret seal the new
 * signing secret (`secrets: 'encrypt'`); a create or delete is one transaction with the client's count
 * of subscriptions (PutItem or DeleteItem, and UpdateItem). Test and redeliver only record a delivery as
 * due: the delivery function, not a route, sends it (and alone opens secrets).
 */
const webhookIds = { webhookId: 'webhookId' };
const webhookRoutes: Route[] = [
  {
    method: 'POST',
    path: `${v11}/Webhooks`,
    handler: 'webhooks/create-webhook',
    access: { table: { actions: ['PutItem', 'UpdateItem'] }, secrets: 'encrypt' },
    audit: { action: 'webhook.create', resource: 'webhook', createdId: 'webhookId' },
  },
  {
    method: 'GET',
    path: `${v11}/Webhooks`,
    handler: 'webhooks/list-webhooks',
    access: { table: { actions: ['Query'] } },
    audit: { action: 'webhook.list', resource: 'webhook' },
  },
  {
    method: 'GET',
    path: `${v11}/Webhooks/{webhookId}`,
    handler: 'webhooks/get-webhook',
    access: { table: { actions: ['GetItem'] } },
    audit: { action: 'webhook.read', resource: 'webhook', ids: webhookIds },
  },
  {
    method: 'DELETE',
    path: `${v11}/Webhooks/{webhookId}`,
    handler: 'webhooks/delete-webhook',
    access: { table: { actions: ['GetItem', 'UpdateItem', 'DeleteItem'] } },
    audit: { action: 'webhook.delete', resource: 'webhook', ids: webhookIds },
  },
  {
    method: 'POST',
    path: `${v11}/Webhooks/{webhookId}/rotate-secret`,
    handler: 'webhooks/rotate-webhook-secret',
    access: { table: { actions: ['GetItem', 'PutItem'] }, secrets: 'encrypt' },
    audit: { action: 'webhook.rotateSecret', resource: 'webhook', ids: webhookIds },
  },
  {
    method: 'POST',
    path: `${v11}/Webhooks/{webhookId}/test`,
    handler: 'webhooks/test-webhook',
    access: { table: { actions: ['GetItem', 'PutItem'] } },
    audit: { action: 'webhook.test', resource: 'webhook', ids: webhookIds },
  },
  {
    method: 'GET',
    path: `${v11}/Webhooks/{webhookId}/deliveries`,
    handler: 'webhooks/list-webhook-deliveries',
    access: { table: { actions: ['GetItem', 'Query'] } },
    audit: { action: 'webhookDelivery.list', resource: 'webhookDelivery', ids: webhookIds },
  },
  {
    method: 'POST',
    path: `${v11}/Webhooks/{webhookId}/deliveries/{deliveryId}/redeliver`,
    handler: 'webhooks/redeliver-webhook-delivery',
    access: { table: { actions: ['GetItem', 'PutItem'] } },
    audit: {
      action: 'webhookDelivery.redeliver',
      resource: 'webhookDelivery',
      ids: { ...webhookIds, deliveryId: 'deliveryId' },
    },
  },
];

/** The obsolete v1 Portals endpoints: the same handlers under v1, marked with their v1.1 successor. */
const obsoleteV1PortalAccountRoutes: Route[] = portalAccountRoutes.map((route) => ({
  ...route,
  path: route.path.replace(v11, v1),
  successor: route.path,
}));

/** Under v1.1/Requests, `{externalId}` is the request's (attachments included: the spec's requestExternalId). */
const requestIds = { externalId: 'requestExternalId' };
const attachmentIds = { ...requestIds, attachmentId: 'attachmentId' };

/**
 * Schemas list, get and validate are not audited: they read published JSON Schemas and check a
 * payload against one without storing, looking anything up or answering with more than the
 * payload's validation errors; no PHI or credential is accessed (docs/security.md, "Audit trail").
 */
export const routes: readonly Route[] = [
  // Requests
  {
    method: 'PUT',
    path: `${v1}/Requests/{appointmentId}`,
    handler: 'requests/upsert-request-v1',
    access: { table: { actions: ['GetItem', 'PutItem', 'UpdateItem'] } },
    audit: { action: 'request.upsert', resource: 'request', ids: { appointmentId: 'requestExternalId' } },
  },
  {
    method: 'PATCH',
    path: `${v1}/Requests/{appointmentId}`,
    handler: 'requests/patch-request-v1',
    access: { table: { actions: ['GetItem', 'PutItem'] } },
    audit: { action: 'request.patch', resource: 'request', ids: { appointmentId: 'requestExternalId' } },
  },
  {
    method: 'POST',
    path: `${v11}/Requests`,
    handler: 'requests/create-request',
    access: { table: { actions: tableActions(['GetItem', 'PutItem'], IDEMPOTENT) }, requestFingerprints: 'sign' },
    audit: { action: 'request.create', resource: 'request', createdId: 'requestExternalId' },
  },
  {
    method: 'PUT',
    path: `${v11}/Requests/{externalId}`,
    handler: 'requests/replace-request',
    access: { table: { actions: ['GetItem', 'PutItem', 'UpdateItem'] } },
    audit: { action: 'request.replace', resource: 'request', ids: requestIds },
  },
  {
    method: 'GET',
    path: `${v11}/Requests/{externalId}`,
    handler: 'requests/get-request',
    access: { table: { actions: ['GetItem'] } },
    audit: { action: 'request.read', resource: 'request', ids: requestIds },
  },
  {
    method: 'GET',
    path: `${v11}/Requests/{externalId}/authorization/history`,
    handler: 'requests/get-authorization-history',
    // GetItem: the request (another client's is a 404); Query: its history entries, newest first.
    access: { table: { actions: ['GetItem', 'Query'] }, cursors: 'sign' },
    audit: { action: 'request.authorizationHistory.read', resource: 'request', ids: requestIds },
  },

  // Attachments. `{externalId}` is the spec's {requestExternalId}. The presigned download
  // is executed with the signer's rights, hence `read`; `delete` removes every version of an object.
  {
    method: 'POST',
    path: `${v11}/Requests/{externalId}/Attachments`,
    handler: 'attachments/create-attachment',
    access: {
      table: { actions: tableActions(['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'], IDEMPOTENT) },
      bucket: ['write', 'presign', 'delete'],
      requestFingerprints: 'sign',
    },
    audit: { action: 'attachment.create', resource: 'attachment', ids: requestIds, createdId: 'attachmentId' },
  },
  {
    method: 'GET',
    path: `${v11}/Requests/{externalId}/Attachments`,
    handler: 'attachments/list-attachments',
    access: { table: { actions: ['GetItem', 'Query'] } },
    audit: { action: 'attachment.list', resource: 'attachment', ids: requestIds },
  },
  {
    method: 'GET',
    path: `${v11}/Requests/{externalId}/Attachments/{attachmentId}`,
    handler: 'attachments/get-attachment',
    access: { table: { actions: ['GetItem'] } },
    audit: { action: 'attachment.read', resource: 'attachment', ids: attachmentIds },
  },
  {
    method: 'GET',
    path: `${v11}/Requests/{externalId}/Attachments/{attachmentId}/download`,
    handler: 'attachments/download-attachment',
    access: { table: { actions: ['GetItem'] }, bucket: ['read'] },
    audit: { action: 'attachment.download', resource: 'attachment', ids: attachmentIds },
  },
  {
    method: 'DELETE',
    path: `${v11}/Requests/{externalId}/Attachments/{attachmentId}`,
    handler: 'attachments/delete-attachment',
    access: { table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] }, bucket: ['delete'] },
    audit: { action: 'attachment.delete', resource: 'attachment', ids: attachmentIds },
  },

  // Portal accounts: v1.1, and the obsolete v1 mirror
  ...portalAccountRoutes,
  ...obsoleteV1PortalAccountRoutes,

  // Service-review automation (docs/rpa.md). `{requestExternalId}` is the only variable at its level;
  // the static `rpa` beside it holds the batch routes.
  ...rpaRoutes,

  // Webhook subscriptions and deliveries (docs/webhooks.md)
  ...webhookRoutes,

  // Schemas and validation
  { method: 'GET', path: `${v11}/Schemas`, handler: 'schemas/list-schemas', access: {}, audit: false },
  { method: 'GET', path: `${v11}/Schemas/{name}`, handler: 'schemas/get-schema', access: {}, audit: false },
  {
    method: 'POST',
    path: `${v11}/Schemas/{name}/validate`,
    handler: 'schemas/validate-payload',
    access: {},
    audit: false,
  },

  // The API's description (docs/openapi.md): public, not audited (no PHI, no credential, no tenant).
  {
    method: 'GET',
    path: `${api}/${OPENAPI_DOCUMENT}`,
    handler: 'docs/get-openapi-document',
    access: {},
    audit: false,
    auth: 'public',
    assets: { [OPENAPI_DOCUMENT]: `lib/openapi/generated/${OPENAPI_DOCUMENT}` },
  },
  { method: 'GET', path: `${api}/docs`, handler: 'docs/get-api-reference', access: {}, audit: false, auth: 'public' },
  {
    method: 'GET',
    path: `${api}/docs/${API_REFERENCE_SCRIPT}`,
    handler: 'docs/get-api-reference-script',
    access: {},
    audit: false,
    auth: 'public',
    assets: { [API_REFERENCE_SCRIPT]: `lib/openapi/generated/${API_REFERENCE_SCRIPT}` },
  },
];

/** S3 ObjectCreated notifications of the attachments bucket, for keys with this prefix and suffix. */
interface S3ObjectCreatedTrigger {
  s3ObjectCreated: { prefix?: string; suffix?: string };
}

/** How an execution of the automation's state machines may end without recording its runs. */
type EndedExecutionStatus = 'TIMED_OUT' | 'ABORTED' | 'FAILED';

/**
 * Step Functions' "Execution Status Change" events (EventBridge, source `aws.states`) of the
 * automation's two state machines, for these statuses.
 */
export interface ExecutionStatusTrigger {
  executionStatusChange: { statuses: readonly EndedExecutionStatus[] };
}

/**
 * Functions that are not behind the API: triggered by events. The CDK stack wires each trigger;
 * the local stack binds the same handler to the emulator's events.
 */
export interface EventFunction<Trigger = S3ObjectCreatedTrigger> {
  /** PascalCase function name, e.g. `ProcessUploadedAttachment`. */
  name: string;
  handler: string;
  trigger: Trigger;
  access: RouteAccess;
}

/** Deployed with the API (infra/api-stack.ts); locally invoked on s3rver's events (local/stack.ts). */
export const eventFunctions: readonly EventFunction[] = [
  {
    // Attachments: every stored object is checked against its metadata (size, SHA-256, type).
    name: 'VerifyUploadedAttachment',
    handler: 'attachments/verify-uploaded-attachment',
    trigger: { s3ObjectCreated: {} },
    access: { table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] }, bucket: ['read', 'delete'] },
  },
];

/**
 * Deployed with the automation (infra/automation-stack.ts: an EventBridge rule); locally invoked by
 * the Step Functions stand-in when an execution ends so (local/step-functions.ts).
 */
export const automationEventFunctions: readonly EventFunction<ExecutionStatusTrigger>[] = [
  {
    // No run is left hanging: an execution that ended without recording its runs fails them (docs/rpa.md).
    name: 'RecordExecutionEnded',
    handler: 'rpa/record-execution-ended',
    trigger: { executionStatusChange: { statuses: ['TIMED_OUT', 'ABORTED', 'FAILED'] } },
    // The run, or the batch and its runs (BatchGetItem); conditional puts fail those still going.
    access: { table: { actions: ['GetItem', 'BatchGetItem', 'PutItem'] } },
  },
];

/**
 * What starts a webhook delivery function on AWS (infra/events-stack.ts). `serviceEvents`: the SQS queue
 * the service-review bus's rule fills (docs/events.md, "On AWS"), polled in batches of `batchSize` by at
 * most `maxConcurrency` invocations at once. `schedule`: every `everyMinutes`.
 */
export type WebhookDeliveryTrigger =
  | { serviceEvents: { batchSize: number; maxConcurrency: number } }
  | { schedule: { everyMinutes: number } };

/**
 * The delivery side of webhooks on AWS (docs/webhooks.md, "On AWS"), deployed in the events stack. Locally
 * the outbox relay and the retry timer call the same code in-process (local/stack.ts,
 * local/webhook-deliveries.ts). Both open signing secrets and read and write nothing but client partitions
 * (webhooks and their deliveries: `CLIENT#…`; never an API key's item).
 */
export const webhookDeliveryFunctions: readonly EventFunction<WebhookDeliveryTrigger>[] = [
  {
    // Each queued event, as the relay hands it over locally: deliverEvent (fan out, record, attempt once).
    // Query: the client's subscriptions; PutItem: record, hold and result of a delivery, a subscription's
    // health; GetItem: a delivery another attempt holds, the subscription before its health changes.
    name: 'DeliverWebhookEvents',
    handler: 'webhooks/deliver-webhook-events',
    trigger: { serviceEvents: { batchSize: 10, maxConcurrency: 10 } },
    access: { table: { actions: ['GetItem', 'Query', 'PutItem'], leadingKeys: ['CLIENT#*'] }, webhookSecrets: 'open' },
  },
  {
    // The retry sweep, as the local timer runs it: retries, test calls and redeliveries (deliverDue). Every
    // minute: a test call waits at most that long; the first retries (5 s, 20 s, 80 s) at most a minute more.
    name: 'DeliverDueWebhooks',
    handler: 'webhooks/deliver-due-webhooks',
    trigger: { schedule: { everyMinutes: 1 } },
    // gsi1: the retry queue (the deliveries due now); GetItem, PutItem: each one's attempt, as above.
    access: {
      table: { actions: ['GetItem', 'PutItem'], queryIndexes: ['gsi1'], leadingKeys: ['CLIENT#*'] },
      webhookSecrets: 'open',
    },
  },
];

/** The Task states of the automation's state machines (lib/rpa/state-machines.ts). */
export type AutomationTaskName = 'FillPortalForm' | 'CheckPortalStatus' | 'RecordRunFailure' | 'FinishBatch';

/**
 * Functions run by the automation's state machines, one per Task state: the CDK stack binds each
 * state to its function's ARN, the local Step Functions stand-in to the same handler. They take
 * and return ids and outcomes only (docs/rpa.md).
 */
export interface AutomationTask {
  /** The Task state's name, also the function's name. */
  name: AutomationTaskName;
  handler: string;
  /** `browser`: drives a payer portal in headless Chromium; `recorder`: a few table writes. */
  worker: 'browser' | 'recorder';
  access: RouteAccess;
}

export const automationTasks: readonly AutomationTask[] = [
  {
    // Logs in with the portal account (its credentials from IssueRunCredentials), fills the form, stops before submitting.
    name: 'FillPortalForm',
    handler: 'rpa/fill-portal-form',
    worker: 'browser',
    access: {
      // The run's account (GetItem), a group's runs (BatchGetItem), the account's lease (PutItem, DeleteItem),
      // the request's authorization and the account's lastLogin (UpdateItem).
      table: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
      screenshots: ['write'],
      invoke: ['IssueRunCredentials'],
    },
  },
  {
    name: 'CheckPortalStatus',
    handler: 'rpa/check-portal-status',
    worker: 'browser',
    access: {
      // The run's account (GetItem), a group's runs (BatchGetItem), the account's lease (PutItem, DeleteItem),
      // the request's authorization and the account's lastLogin (UpdateItem).
      table: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
      screenshots: ['write'],
      invoke: ['IssueRunCredentials'],
    },
  },
  {
    // The Catch path of every browser task: records the run's failure when the worker could not.
    name: 'RecordRunFailure',
    handler: 'rpa/record-run-failure',
    worker: 'recorder',
    // DeleteItem: a view-on-page run that ends lands its flight (lib/rpa/automation-quotas.ts).
    access: { table: { actions: ['GetItem', 'PutItem', 'DeleteItem'] } },
  },
  {
    name: 'FinishBatch',
    handler: 'rpa/finish-batch',
    worker: 'recorder',
    // DeleteItem: the finished batch lands its flight (lib/rpa/automation-quotas.ts).
    access: { table: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'DeleteItem'] } },
  },
];

/** The Task states of the scheduled re-checks' state machine (lib/rechecks/state-machine.ts). */
export type RecheckTaskName = 'SelectDueRechecks' | 'StartRecheckBatch';

/**
 * Functions of the re-check state machine that EventBridge Scheduler starts (docs/rechecks.md); locally
 * the re-check timer runs the same definition with each Task bound to the same handler (local/rechecks.ts).
 */
export interface RecheckTask {
  name: RecheckTaskName;
  handler: string;
  access: RouteAccess;
}

export const recheckTasks: readonly RecheckTask[] = [
  {
    name: 'SelectDueRechecks',
    handler: 'rechecks/select-due-rechecks',
    // The due re-checks (gsi1's shards), each one's request and client (GetItem), moved on (PutItem) or ended (DeleteItem).
    access: { table: { actions: ['GetItem', 'PutItem', 'DeleteItem'], queryIndexes: ['gsi1'] } },
  },
  {
    name: 'StartRecheckBatch',
    handler: 'rechecks/start-recheck-batch',
    // A client's batch start (START_AUTOMATION) without an Idempotency-Key: nothing to replay, the schedule already moved on.
    access: {
      table: {
        actions: tableActions(CHOOSE_ACCOUNT, AUTOMATION_QUOTAS, ['GetItem', 'PutItem']),
        queryIndexes: CHOOSE_ACCOUNT_INDEXES,
      },
      automation: 'start',
    },
  },
];

/** The functions of `invokedFunctions`. */
export type InvokedFunctionName = 'IssueRunCredentials';

/**
 * Functions other functions invoke directly (Lambda Invoke, RequestResponse), not a Task state nor
 * behind the API: the CDK stack grants `lambda:InvokeFunction` on each to the functions whose access
 * names it (`invoke`), the local Lambda stand-in (local/lambda.ts) serves the same handler by name.
 */
export interface InvokedFunction {
  /** PascalCase function name, also the local stand-in's. */
  name: InvokedFunctionName;
  handler: string;
  /** The environment variable that carries its deployed name to the functions that invoke it. */
  environment: string;
  /** The function's timeout (CDK and the local stand-in). */
  timeoutSeconds: number;
  access: RouteAccess;
}

export const invokedFunctions: readonly InvokedFunction[] = [
  {
    // One run's portal credentials, for the browser worker running it: checks the run is live, of that
    // account and in a running execution (`automation: 'read'`: DescribeExecution), records the issue
    // once per attempt (PutItem: the run's conditional write), then decrypts.
    name: 'IssueRunCredentials',
    handler: 'rpa/issue-run-credentials',
    environment: 'RUN_CREDENTIALS_FUNCTION_NAME',
    // Three reads, one write and one or two KMS Decrypts; the worker waits for it before it logs in.
    timeoutSeconds: 10,
    access: { table: { actions: ['GetItem', 'PutItem'] }, secrets: 'decrypt', automation: 'read' },
  },
];

/**
 * The Lambda authorizer (functions/authorizer.ts): reads API-key items by their hash, and records
 * their last use; nothing but `APIKEY#` items.
 */
export const authorizerAccess: RouteAccess = {
  table: { actions: ['GetItem', 'UpdateItem'], leadingKeys: ['APIKEY#*'] },
};

/** A stable, readable name for the function of a route, e.g. `requests/create-request` → `CreateRequest`. */
export const functionNameOf = (route: Route): string => {
  const base = route.handler
    .split('/')
    .at(-1)!
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
  return route.successor ? `${base}V1` : base;
};
