/**
 * What each function may touch: the CDK constructs turn a function's `RouteAccess` into least-privilege
 * grants (infra/constructs/route-access.ts); docs/infrastructure.md derives its table of grants from
 * here. The routes' access is keyed by handler id, so a route missing here, or an id no row has, does
 * not compile; the obsolete v1 Portals rows share their successor's handler and so its access.
 */
import type { IndexName } from '#lib/table';
import type { HandlerId } from './route-table.ts';
import { PARTITION } from './table-partitions.ts';

/**
 * DynamoDB actions on the service table. Each row lists exactly the calls its handler's stores make
 * (the table of docs/infrastructure.md derives every row): GetItem (every `get`), BatchGetItem (the
 * RPA runs of a batch, the portal accounts of a payer), Query (a key's items: attachments of a request, runs of a request), PutItem
 * (conditional puts: creates and versioned updates), UpdateItem (in-place updates, attachment slots),
 * DeleteItem (attachments, portal accounts). Idempotent POSTs add Powertools' record calls: GetItem,
 * PutItem, UpdateItem, DeleteItem.
 */
export type TableAction = 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem';

/** The partitions (./table-partitions.ts) each action may touch; every action of `actions` names its own. */
type PartitionsByAction = Readonly<Partial<Record<TableAction, readonly string[]>>>;

export interface TableAccess {
  /** On the table's own items. */
  actions: readonly TableAction[];
  /** Query on these indexes (portal accounts: by organization, portal, payer, status; docs/data-model.md). */
  queryIndexes?: readonly IndexName[];
  /**
   * Only items whose partition key matches one of these patterns (`dynamodb:LeadingKeys`): one list for
   * every action, or a list per action (./table-partitions.ts).
   */
  leadingKeys?: readonly string[] | PartitionsByAction;
  /**
   * GetItem of Client items, every attribute but the usage plan key, by a projection (the re-check settings,
   * the quotas): IAM's `dynamodb:Attributes` holds the read to those names, since `dynamodb:LeadingKeys` cannot
   * tell the client's own partition from its others (lib/entities/tenancy.ts `clientSettingsAttributes`).
   */
  clientSettings?: 'read';
}

/**
 * The partitions `action` may touch: undefined without `leadingKeys` (every partition), else the list for
 * every action or the action's own. Throws when a per-action list leaves a declared action out, or names one
 * that is not declared: such a row would grant what nobody meant.
 */
export const leadingKeysOf = (
  { actions, leadingKeys }: TableAccess,
  action: TableAction,
): readonly string[] | undefined => {
  if (!leadingKeys || Array.isArray(leadingKeys)) return leadingKeys as readonly string[] | undefined;
  const perAction = leadingKeys as PartitionsByAction;
  const named = Object.keys(perAction);
  if (named.length !== actions.length || !actions.every((declared) => perAction[declared]?.length)) {
    throw new Error(`leadingKeys name ${named.join(', ')}; the actions are ${actions.join(', ')}`);
  }
  return perAction[action];
};

/** The actions that write: with them, DynamoDB also needs the data key to encrypt. */
export const TABLE_WRITE_ACTIONS: readonly TableAction[] = ['PutItem', 'UpdateItem', 'DeleteItem'];

/** The functions other functions invoke directly (`invokedFunctions`, ./automation-tasks.ts). */
export type InvokedFunctionName = 'IssueRunCredentials' | 'IssuePayerToken';

/** What a function may touch; the CDK construct turns this into least-privilege grants. */
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
   * The automation's state machines (lib/runs/state-machines.ts): `start` starts executions and
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
  /**
   * Signing client assertions for payers' token endpoints (the payer token function alone): `kms:Sign`
   * and `kms:GetPublicKey` on the clients' payer signing keys (docs/payer-api.md, "Signing keys").
   */
  payerAssertions?: 'sign';
}

/**
 * Powertools' idempotency records (lib/http/idempotency.ts): get, put, update, delete one record; an
 * idempotent route also reads the key of their request fingerprints (`requestFingerprints`).
 */
const IDEMPOTENT: readonly TableAction[] = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'];

/** The actions of `lists`, once each, in the order of TableAction. */
export const tableActions = (...lists: ReadonlyArray<readonly TableAction[]>): TableAction[] => {
  const all = new Set(lists.flat());
  return (['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'] as const).filter((action) =>
    all.has(action),
  );
};

/**
 * The filter's key conditions: organization, portal, payer or a search's trigram (gsi2), status, portal and status
 * (dynamo-portal-account-pages.ts).
 */
const PORTAL_ACCOUNT_FILTER_INDEXES: readonly IndexName[] = ['gsi1', 'gsi2', 'gsi3', 'gsi4'];

/**
 * A start chooses each run's portal account (lib/portal/portal-account-choice.ts): a named account
 * (GetItem), the payer's accounts (their payer index entries on gsi2, then BatchGetItem), the
 * organization's active accounts (gsi3).
 */
export const CHOOSE_ACCOUNT: readonly TableAction[] = ['GetItem', 'BatchGetItem'];
export const CHOOSE_ACCOUNT_INDEXES: readonly IndexName[] = ['gsi2', 'gsi3'];
/**
 * The client's automation quotas (lib/runs/automation-quotas.ts): the flight put with its runs counted
 * in flight, in one transaction (PutItem, UpdateItem); when that is refused, the counter and the live
 * flights read (GetItem, Query) and the counter corrected (UpdateItem); the hour's and the day's counts
 * (UpdateItem); the flight taken back when the execution could not be started (GetItem, then DeleteItem
 * and UpdateItem in one transaction).
 */
export const AUTOMATION_QUOTAS: readonly TableAction[] = ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'];

/**
 * The starts: choose each run's channel (the payer directory and connections by GetItem and gsi2, the
 * portal accounts), admit the runs, store them, start the execution; idempotent.
 */
const START_AUTOMATION: RouteAccess = {
  table: { actions: tableActions(CHOOSE_ACCOUNT, AUTOMATION_QUOTAS, IDEMPOTENT), queryIndexes: CHOOSE_ACCOUNT_INDEXES },
  automation: 'start',
  requestFingerprints: 'sign',
};

/**
 * Every route's access, by its handler. Portal accounts and webhooks: secrets are sealed where they are
 * written (`secrets: 'encrypt'`); a webhook's create or delete is one transaction with the client's count
 * of subscriptions (PutItem or DeleteItem, and UpdateItem); its test and redeliver only record a delivery
 * as due: the delivery function, not a route, sends it (and alone opens secrets). Automation: starting a
 * run or a batch also describes executions, reading one settles a run whose execution ended unrecorded;
 * the session's screenshots are shown through presigned URLs (`screenshots: ['read']`). Attachments: the
 * presigned download is executed with the signer's rights, hence `read`; `delete` removes every version
 * of an object. The schemas and the API's description touch nothing.
 */
export const routeAccess: Record<HandlerId, RouteAccess> = {
  // Requests
  'requests/upsert-request-v1': { table: { actions: ['GetItem', 'PutItem', 'UpdateItem'] } },
  'requests/patch-request-v1': { table: { actions: ['GetItem', 'PutItem'] } },
  'requests/create-request': {
    table: { actions: tableActions(['GetItem', 'PutItem'], IDEMPOTENT) },
    requestFingerprints: 'sign',
  },
  'requests/replace-request': { table: { actions: ['GetItem', 'PutItem', 'UpdateItem'] } },
  'requests/get-request': { table: { actions: ['GetItem'] } },
  // GetItem: the request (another client's is a 404); Query: its history entries, newest first.
  'requests/get-authorization-history': { table: { actions: ['GetItem', 'Query'] }, cursors: 'sign' },

  // Attachments
  'attachments/create-attachment': {
    table: { actions: tableActions(['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'], IDEMPOTENT) },
    bucket: ['write', 'presign', 'delete'],
    requestFingerprints: 'sign',
  },
  'attachments/list-attachments': { table: { actions: ['GetItem', 'Query'] } },
  'attachments/get-attachment': { table: { actions: ['GetItem'] } },
  'attachments/download-attachment': { table: { actions: ['GetItem'] }, bucket: ['read'] },
  'attachments/delete-attachment': {
    table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
    bucket: ['delete'],
  },

  // Portal accounts (v1.1 and the obsolete v1 mirror)
  // PutItem: also the account's payer and trigram entries (docs/data-model.md, patterns 24 and 41).
  'portal-accounts/create-portal-account': {
    table: { actions: tableActions(['GetItem', 'PutItem'], IDEMPOTENT) },
    secrets: 'encrypt',
    requestFingerprints: 'sign',
  },
  'portal-accounts/list-portal-accounts': { table: { actions: ['GetItem'], queryIndexes: ['gsi1'] }, cursors: 'sign' },
  'portal-accounts/get-portal-account': { table: { actions: ['GetItem'] } },
  // UpdateItem: the organizations' portal-account counts, when an account moves (storage quotas).
  // DeleteItem: the payer index entries of payers the replacement drops, the trigram entries a rename drops.
  'portal-accounts/replace-portal-account': {
    table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] },
    secrets: 'encrypt',
  },
  // DeleteItem: also the account's payer and trigram entries (patterns 24 and 41).
  'portal-accounts/delete-portal-account': { table: { actions: ['GetItem', 'UpdateItem', 'DeleteItem'] } },
  // BatchGetItem: a filter by payer or by search reads the accounts its index entries name (patterns 13, 40).
  'portal-accounts/filter-portal-accounts': {
    table: { actions: ['GetItem', 'BatchGetItem'], queryIndexes: PORTAL_ACCOUNT_FILTER_INDEXES },
    cursors: 'sign',
  },

  // Payer connections. GetItem: the client user, the client's quotas, the payer's endpoint (create, and a
  // replace that changes the payer); UpdateItem: the organizations' connection counts (storage quotas).
  'payers/create-payer-connection': {
    table: { actions: tableActions(['GetItem', 'PutItem', 'UpdateItem'], IDEMPOTENT) },
    requestFingerprints: 'sign',
  },
  'payers/list-payer-connections': { table: { actions: ['GetItem'], queryIndexes: ['gsi1'] }, cursors: 'sign' },
  'payers/get-payer-connection': { table: { actions: ['GetItem'] } },
  'payers/replace-payer-connection': { table: { actions: ['GetItem', 'PutItem', 'UpdateItem'] } },
  'payers/delete-payer-connection': { table: { actions: ['GetItem', 'UpdateItem', 'DeleteItem'] } },

  // Service-review automation
  'rpa/issue-rpa-access-token': { table: { actions: ['GetItem'] }, rpaTokens: 'sign' },
  // gsi1: the token's API key by its id (is it still active?), read with every call.
  'rpa/get-scraper-session': {
    table: { actions: ['GetItem', 'Query'], queryIndexes: ['gsi1'] },
    rpaTokens: 'verify',
    screenshots: ['read'],
  },
  'rpa/start-view-on-page': START_AUTOMATION,
  // A start (START_AUTOMATION) whose channel is the payer's API: the payer directory and the organization's
  // connection to the payer (GetItem, gsi2), the request's attachments for the Bundle's documents (Query).
  'requests/submit-request': { ...START_AUTOMATION, table: { ...START_AUTOMATION.table!, queryIndexes: ['gsi2'] } },
  // A cancel starts a submission too, with no portal account to choose: the request's runs (Query) for the claim
  // it cancels, the payer directory and the organization's connection to the payer (GetItem, gsi2).
  'requests/cancel-request': {
    table: { actions: tableActions(AUTOMATION_QUOTAS, IDEMPOTENT), queryIndexes: ['gsi2'] },
    automation: 'start',
    requestFingerprints: 'sign',
  },
  // PutItem: a run its execution left unended (ended, or gone) is failed when read (docs/rpa.md).
  'rpa/get-rpa-run': { table: { actions: ['GetItem', 'PutItem'] }, automation: 'read' },
  'rpa/start-check-auth-status': START_AUTOMATION,
  // PutItem: a batch its execution left open (ended, or gone) is closed when read, its unended runs failed.
  'rpa/get-check-auth-status': { table: { actions: ['GetItem', 'BatchGetItem', 'PutItem'] }, automation: 'read' },

  // Webhooks
  'webhooks/create-webhook': { table: { actions: ['PutItem', 'UpdateItem'] }, secrets: 'encrypt' },
  'webhooks/list-webhooks': { table: { actions: ['Query'] } },
  'webhooks/get-webhook': { table: { actions: ['GetItem'] } },
  'webhooks/delete-webhook': { table: { actions: ['GetItem', 'UpdateItem', 'DeleteItem'] } },
  'webhooks/rotate-webhook-secret': { table: { actions: ['GetItem', 'PutItem'] }, secrets: 'encrypt' },
  'webhooks/test-webhook': { table: { actions: ['GetItem', 'PutItem'] } },
  'webhooks/list-webhook-deliveries': { table: { actions: ['GetItem', 'Query'] } },
  'webhooks/redeliver-webhook-delivery': { table: { actions: ['GetItem', 'PutItem'] } },

  // The payer JWKS: its key set found by its public id (gsi1), nothing else; no key of any keeper.
  'payers/get-payer-jwks': { table: { actions: [], queryIndexes: ['gsi1'] } },

  // A payer's notification (public): its subscription (GetItem; PutItem records the notification), the named claims'
  // pointers in the client's keys, then a re-check's batch start (lib/routes/automation-tasks.ts, StartRecheckBatch):
  // held to those partitions, since anyone may call it.
  'payers/receive-payer-notification': {
    table: {
      actions: tableActions(CHOOSE_ACCOUNT, AUTOMATION_QUOTAS, ['GetItem', 'PutItem']),
      queryIndexes: CHOOSE_ACCOUNT_INDEXES,
      leadingKeys: {
        // The subscription; the claims, the client user and client, the requests, payer endpoints and connections.
        GetItem: [PARTITION.payerSubscription, PARTITION.anyClient, PARTITION.payerEndpoint],
        BatchGetItem: [PARTITION.portalAccount],
        Query: [PARTITION.automation],
        // The subscription's notification; the runs, the batch, the flight.
        PutItem: [PARTITION.payerSubscription, PARTITION.request, PARTITION.batch, PARTITION.automation],
        UpdateItem: [PARTITION.anyClient],
        DeleteItem: [PARTITION.automation],
      },
    },
    automation: 'start',
  },

  // Schemas and the API's description
  'schemas/list-schemas': {},
  'schemas/get-schema': {},
  'schemas/validate-payload': {},
  'docs/get-openapi-document': {},
  'docs/get-api-reference': {},
  'docs/get-api-reference-script': {},
};

/**
 * The Lambda authorizer (functions/authorizer.ts): reads API-key items by their hash, and records
 * their last use; nothing but `APIKEY#` items.
 */
export const authorizerAccess: RouteAccess = {
  table: { actions: ['GetItem', 'UpdateItem'], leadingKeys: [PARTITION.apiKey] },
};
