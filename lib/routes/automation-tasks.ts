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
import { PARTITION } from './table-partitions.ts';

const { request, batch, portalAccount, payerConnection, outbox, automation, payerEndpoint, anyClient } = PARTITION;
const { payerSubscription } = PARTITION;

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
      table: {
        actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
        leadingKeys: {
          // The run and its request; the run's portal account; its flight, when the run ends.
          GetItem: [request, portalAccount, automation],
          // The run's steps and end, with its event; the account's lease.
          PutItem: [request, outbox, portalAccount],
          // The account's lastLogin (and attention, for a refused login); the count in flight its landing lowers.
          UpdateItem: [portalAccount, automation],
          // The lease given back; the run's flight landed when it ends.
          DeleteItem: [portalAccount, automation],
        },
      },
      screenshots: ['write'],
      invoke: ['IssueRunCredentials'],
    },
  },
  {
    name: 'CheckPortalStatus',
    handler: 'rpa/check-portal-status',
    worker: 'browser',
    access: {
      table: {
        actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
        leadingKeys: {
          // Each run and its request; the group's portal account.
          GetItem: [request, portalAccount],
          // The group's runs.
          BatchGetItem: [request],
          // The runs' steps and ends with their events; a changed authorization's history entry, event and
          // re-check; the account's lease.
          PutItem: [request, outbox, portalAccount],
          // The request's authorization; the account's lastLogin (and attention).
          UpdateItem: [request, portalAccount],
          // The re-check a decision ends; the lease given back. A batch's flight lands in FinishBatch.
          DeleteItem: [request, portalAccount],
        },
        // The client's re-check settings, read when a status is undecided.
        clientSettings: 'read',
      },
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
      table: {
        actions: ['GetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'],
        leadingKeys: {
          // The run, its request, connection and the payer's endpoint; its flight, when the run ends; the
          // connection's PAS subscription (a pended answer makes one).
          GetItem: [request, payerConnection, payerEndpoint, automation, payerSubscription],
          // The request's earlier runs and its attachments.
          Query: [request],
          // The run's steps and end with its event; a changed authorization's history entry, event and
          // re-check; the connection marked `attention`; a subscription and the connection's pointer to it.
          PutItem: [request, outbox, payerConnection, payerSubscription],
          // The request's authorization; the count in flight the run's landing lowers.
          UpdateItem: [request, automation],
          // The re-check a decision ends; the run's flight landed.
          DeleteItem: [request, automation],
        },
        // The client's re-check settings, read when a status is undecided.
        clientSettings: 'read',
      },
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
      table: {
        actions: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'UpdateItem', 'DeleteItem'],
        leadingKeys: {
          // Each run and request, the connection and the payer's endpoint; the connection's PAS subscription.
          GetItem: [request, payerConnection, payerEndpoint, payerSubscription],
          // The group's runs.
          BatchGetItem: [request],
          // A request's latest submit run.
          Query: [request],
          // The runs' steps and ends with their events; a changed authorization's history entry, event and
          // re-check; the connection marked `attention`; a subscription and the connection's pointer to it.
          PutItem: [request, outbox, payerConnection, payerSubscription],
          // The request's authorization.
          UpdateItem: [request],
          // The re-check a decision ends (in the authorization's transaction).
          DeleteItem: [request],
        },
        // The client's re-check settings, read when a status is undecided.
        clientSettings: 'read',
      },
      invoke: ['IssuePayerToken'],
    },
  },
  {
    // The Catch path of every browser task: records the run's failure when the worker could not.
    name: 'RecordRunFailure',
    handler: 'rpa/record-run-failure',
    worker: 'recorder',
    access: {
      table: {
        actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
        // The run (or a group's runs), its end and event; a view-on-page run that ends lands its flight: the
        // flight read, then deleted with the count in flight lowered (lib/runs/automation-quotas.ts).
        leadingKeys: {
          GetItem: [request, automation],
          PutItem: [request, outbox],
          UpdateItem: [automation],
          DeleteItem: [automation],
        },
      },
    },
  },
  {
    name: 'FinishBatch',
    handler: 'rpa/finish-batch',
    worker: 'recorder',
    access: {
      table: {
        actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
        leadingKeys: {
          // The batch, each run still going, its flight; its runs at once.
          GetItem: [request, batch, automation],
          BatchGetItem: [request],
          // The runs it fails and the batch it closes, with their events.
          PutItem: [request, batch, outbox],
          // The finished batch lands its flight: deleted, the count in flight lowered (lib/runs/automation-quotas.ts).
          UpdateItem: [automation],
          DeleteItem: [automation],
        },
      },
    },
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
    // The due re-checks (gsi1's shards), each one's request and client (GetItem), moved on (PutItem) or ended
    // (DeleteItem). The client's settings are a whole Client item here (lib/rechecks/service.ts), so its reads
    // reach every client partition. The passed decision deadlines (gsi1's shards too), each removed (DeleteItem)
    // with its history entry (PutItem, the request's partition) and its outbox event, in one transaction.
    access: {
      table: {
        actions: ['GetItem', 'PutItem', 'DeleteItem'],
        queryIndexes: ['gsi1'],
        leadingKeys: { GetItem: [anyClient], PutItem: [request, outbox], DeleteItem: [request] },
      },
    },
  },
  {
    name: 'StartRecheckBatch',
    handler: 'rechecks/start-recheck-batch',
    // A client's batch start (START_AUTOMATION, ./access-model.ts) without an Idempotency-Key: nothing to replay, the schedule already moved on.
    access: {
      table: {
        actions: tableActions(CHOOSE_ACCOUNT, AUTOMATION_QUOTAS, ['GetItem', 'PutItem']),
        queryIndexes: CHOOSE_ACCOUNT_INDEXES,
        leadingKeys: {
          // The client user and client, the requests, portal accounts, payer endpoints and connections.
          GetItem: [anyClient, payerEndpoint],
          // The payer's portal accounts.
          BatchGetItem: [portalAccount],
          // The client's live flights, when a refused admission recounts them.
          Query: [automation],
          // The runs, the batch, the flight; the re-checks of requests it could not start.
          PutItem: [request, batch, automation],
          // The count in flight; the hour's and day's run counts, which live in the client's own partition
          // (lib/entities/storage-usage.ts).
          UpdateItem: [anyClient],
          // A flight taken back when the execution could not start.
          DeleteItem: [automation],
        },
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
    access: {
      // The run and its account; the step on the run.
      table: {
        actions: ['GetItem', 'PutItem'],
        leadingKeys: { GetItem: [request, portalAccount], PutItem: [request] },
      },
      secrets: 'decrypt',
      automation: 'read',
    },
  },
  {
    // A payer access token for one connection: the one function that signs our client assertions
    // (kms:Sign on the clients' payer signing keys), caching each connection's token while it is warm.
    name: 'IssuePayerToken',
    handler: 'payers/issue-payer-token',
    environment: 'PAYER_TOKEN_FUNCTION_NAME',
    // A token request is an assertion (one KMS Sign) and one POST to the payer's token endpoint (≤ 10 s).
    timeoutSeconds: 20,
    access: {
      table: {
        actions: ['GetItem', 'PutItem'],
        // The connection, the payer's endpoint, the client's key set (in its own partition); the connection marked
        // `attention` when the payer refuses the assertion.
        leadingKeys: { GetItem: [payerConnection, payerEndpoint, anyClient], PutItem: [payerConnection] },
      },
      payerAssertions: 'sign',
    },
  },
];
