/**
 * Functions of the state machines and the functions they invoke: the automation's Task states
 * (lib/runs/state-machines.ts), the scheduled re-checks' Task states (lib/rechecks/state-machine.ts),
 * the run credentials function. The state machines own their Task names; these tables say which
 * handler runs each one and what it may touch.
 */
import type { RecheckTaskName } from '#lib/rechecks/state-machine';
import type { AutomationTaskName } from '#lib/runs/state-machines';
import {
  AUTOMATION_QUOTAS,
  CHOOSE_ACCOUNT,
  CHOOSE_ACCOUNT_INDEXES,
  type InvokedFunctionName,
  type RouteAccess,
  tableActions,
} from './access-model.ts';

/**
 * Functions run by the automation's state machines, one per Task state: the CDK stack binds each
 * state to its function's ARN, the local Step Functions stand-in to the same handler. They take
 * and return ids and outcomes only (docs/rpa.md).
 */
export interface AutomationTask {
  /** The Task state's name, also the function's name. */
  name: AutomationTaskName;
  handler: string;
  /**
   * `browser`: drives a payer portal in headless Chromium; `payer`: calls a payer's PAS API over HTTPS
   * (no browser); `recorder`: a few table writes.
   */
  worker: 'browser' | 'payer' | 'recorder';
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
    // Sends a request to the payer's PAS API ($submit, or $inquire first when an attempt may have reached it).
    name: 'SubmitPasClaim',
    handler: 'payers/submit-pas-claim',
    worker: 'payer',
    access: {
      // The run, its request, connection and endpoint (GetItem), the request's runs and attachments (Query),
      // the run's steps and the request's authorization with its history and event (PutItem, UpdateItem),
      // the connection marked `attention` (UpdateItem), a flight landed (DeleteItem, UpdateItem of the count).
      table: { actions: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'] },
      // The request's attachments, sent inline in the Bundle (PAS carries documents as data).
      bucket: ['read'],
      invoke: ['IssuePayerToken'],
    },
  },
  {
    // Reads a batch group's authorizations with the payer's PAS API ($inquire), one request after the other.
    name: 'CheckPayerStatus',
    handler: 'payers/check-payer-status',
    worker: 'payer',
    access: {
      // The group's runs (BatchGetItem), each request, connection and endpoint (GetItem), a request's
      // latest submit run (Query), the run's steps and the request's authorization (PutItem, UpdateItem).
      table: { actions: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem'] },
      invoke: ['IssuePayerToken'],
    },
  },
  {
    // The Catch path of every browser task: records the run's failure when the worker could not.
    name: 'RecordRunFailure',
    handler: 'rpa/record-run-failure',
    worker: 'recorder',
    // A view-on-page run that ends lands its flight: DeleteItem and UpdateItem of the count in flight
    // (lib/runs/automation-quotas.ts).
    access: { table: { actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] } },
  },
  {
    name: 'FinishBatch',
    handler: 'rpa/finish-batch',
    worker: 'recorder',
    // The finished batch lands its flight: DeleteItem and UpdateItem of the count in flight
    // (lib/runs/automation-quotas.ts).
    access: { table: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'] } },
  },
];

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
    // A client's batch start (START_AUTOMATION, ./access-model.ts) without an Idempotency-Key: nothing to replay, the schedule already moved on.
    access: {
      table: {
        actions: tableActions(CHOOSE_ACCOUNT, AUTOMATION_QUOTAS, ['GetItem', 'PutItem']),
        queryIndexes: CHOOSE_ACCOUNT_INDEXES,
      },
      automation: 'start',
    },
  },
];

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
  {
    // A payer access token for one connection: the one function that signs our client assertions
    // (kms:Sign on the clients' payer signing keys), caching each connection's token while it is warm.
    name: 'IssuePayerToken',
    handler: 'payers/issue-payer-token',
    environment: 'PAYER_TOKEN_FUNCTION_NAME',
    // A token request is an assertion (one KMS Sign) and one POST to the payer's token endpoint (≤ 10 s).
    timeoutSeconds: 20,
    access: { table: { actions: ['GetItem', 'PutItem'] }, payerAssertions: 'sign' },
  },
];
