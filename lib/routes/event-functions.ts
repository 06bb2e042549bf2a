/**
 * Functions that are not behind the API: triggered by events. The CDK stacks wire each trigger and turn
 * each row's access into grants; the local stack binds the same handler to its emulators' events.
 */
import type { RouteAccess } from './access-model.ts';
import { PARTITION } from './table-partitions.ts';

const { request, batch, outbox, anyClient, payerConnection, payerEndpoint, payerSubscription } = PARTITION;

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

/** A function of events, with its trigger and what it may touch. */
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
    access: {
      table: {
        actions: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
        leadingKeys: {
          // The attachment's record: read, made available or rejected, deleted.
          GetItem: [request],
          PutItem: [request],
          DeleteItem: [request],
          // Its request's slots, and the client's attachment bytes, a counter in the client's own partition.
          UpdateItem: [anyClient],
        },
      },
      bucket: ['read', 'delete'],
    },
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
    // The run, or the batch and its runs (BatchGetItem); conditional puts fail those still going and close the
    // batch, each with its event.
    access: {
      table: {
        actions: ['GetItem', 'BatchGetItem', 'PutItem'],
        leadingKeys: { GetItem: [request, batch], BatchGetItem: [request], PutItem: [request, batch, outbox] },
      },
    },
  },
];

/** A function started every `everyMinutes` by an EventBridge rule. */
export interface ScheduleTrigger {
  schedule: { everyMinutes: number };
}

/**
 * Deployed with the automation (infra/automation-stack.ts: an EventBridge rule on a schedule), beside the
 * payer token function they invoke; locally a timer runs the same code (local/payer-subscriptions.ts).
 */
export const scheduledPayerFunctions: readonly EventFunction<ScheduleTrigger>[] = [
  {
    // The connections' PAS subscriptions (docs/payer-api.md, "Subscriptions"): renewed, checked, made again.
    name: 'KeepPayerSubscriptions',
    handler: 'payers/keep-payer-subscriptions',
    trigger: { schedule: { everyMinutes: 5 } },
    access: {
      table: {
        actions: ['GetItem', 'PutItem'],
        // gsi1: the due subscriptions, shard by shard.
        queryIndexes: ['gsi1'],
        leadingKeys: {
          // Each subscription; the connection and its pointer to its current subscription; the payer's endpoint.
          GetItem: [payerSubscription, payerConnection, payerEndpoint],
          // A subscription's next look, renewal or status; one made again with the pointer moved to it.
          PutItem: [payerSubscription, payerConnection],
        },
      },
      invoke: ['IssuePayerToken'],
    },
  },
];

/**
 * What starts a webhook delivery function on AWS (infra/events-stack.ts). `serviceEvents`: the SQS queue
 * the service-review bus's rule fills (docs/events.md, "On AWS"), polled in batches of `batchSize` by at
 * most `maxConcurrency` invocations at once. `schedule`: every `everyMinutes`.
 */
export type WebhookDeliveryTrigger = { serviceEvents: { batchSize: number; maxConcurrency: number } } | ScheduleTrigger;

/**
 * The delivery side of webhooks on AWS (docs/webhooks.md, "On AWS"), deployed in the events stack. Locally
 * the outbox relay and the retry timer call the same code in-process (local/stack.ts,
 * local/webhook-deliveries.ts). Both open signing secrets and read and write nothing but client partitions
 * (webhooks and their deliveries: `CLIENT#…`; never an API key's item). The subscriptions are in the client's
 * own partition, which IAM cannot tell from the client's others: `CLIENT#*` is every client partition.
 */
export const webhookDeliveryFunctions: readonly EventFunction<WebhookDeliveryTrigger>[] = [
  {
    // Each queued event, as the relay hands it over locally: deliverEvent (fan out, record, attempt once).
    // Query: the client's subscriptions; PutItem: record, hold and result of a delivery, a subscription's
    // health; GetItem: a delivery another attempt holds, the subscription before its health changes.
    name: 'DeliverWebhookEvents',
    handler: 'webhooks/deliver-webhook-events',
    trigger: { serviceEvents: { batchSize: 10, maxConcurrency: 10 } },
    access: { table: { actions: ['GetItem', 'Query', 'PutItem'], leadingKeys: [anyClient] }, webhookSecrets: 'open' },
  },
  {
    // The retry sweep, as the local timer runs it: retries, test calls and redeliveries (deliverDue). Every
    // minute: a test call waits at most that long; the first retries (5 s, 20 s, 80 s) at most a minute more.
    name: 'DeliverDueWebhooks',
    handler: 'webhooks/deliver-due-webhooks',
    trigger: { schedule: { everyMinutes: 1 } },
    // gsi1: the retry queue (the deliveries due now); GetItem, PutItem: each one's attempt, as above.
    access: {
      table: { actions: ['GetItem', 'PutItem'], queryIndexes: ['gsi1'], leadingKeys: [anyClient] },
      webhookSecrets: 'open',
    },
  },
];
