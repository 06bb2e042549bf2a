import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { EventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { secretsReaderRoleName } from '#infra/constructs/encryption-keys';
import { OutboxPipe } from '#infra/constructs/outbox-pipe';
import { bindRouteAccess } from '#infra/constructs/route-access';
import { ServiceEventsQueue } from '#infra/constructs/service-events-queue';
import { ServiceFunction } from '#infra/constructs/service-function';
import type { DataStack } from '#infra/data-stack';
import { EVENT_BUS_NAME } from '#lib/events/bus-event';
import type { EventFunction, WebhookDeliveryTrigger } from '#lib/routes/event-functions';

export interface EventsStackProps extends StackProps {
  data: DataStack;
  /** lib/routes/event-functions.ts webhookDeliveryFunctions: one function per row, started by its trigger. */
  functions: readonly EventFunction<WebhookDeliveryTrigger>[];
}

/**
 * The queue consumer's timeout: a message's event fans out to at most 20 subscriptions, 4 attempts at
 * a time, each within the 10-second timeout (lib/webhooks/delivery.ts): about 55 s at worst; a batch's
 * messages go in parallel.
 */
export const QUEUE_CONSUMER_TIMEOUT = Duration.seconds(90);

/**
 * Events on AWS (docs/events.md, docs/webhooks.md "On AWS"): the `service-review` event bus (its own KMS
 * key), the pipe that feeds it from the table's stream (infra/constructs/outbox-pipe.ts), the rule, queue and
 * dead-letter queue of webhook delivery (service-events-queue.ts), and the delivery functions of
 * lib/routes/event-functions.ts `webhookDeliveryFunctions`, each with exactly its row's access and started by its trigger:
 * the queue, or a schedule. Apart from the API stack, whose resource count is near CloudFormation's limit;
 * depends on the data stack (the table's stream, the keys).
 */
export class EventsStack extends Stack {
  readonly key: Key;
  readonly bus: EventBus;
  readonly pipe: OutboxPipe;
  readonly deliveries: ServiceEventsQueue;
  readonly deadLetterQueue: Queue;
  readonly functions: Record<string, ServiceFunction> = {};

  constructor(scope: Construct, id: string, props: EventsStackProps) {
    const { data, functions, ...stackProps } = props;
    super(scope, id, stackProps);
    this.addStackDependency(data);
    // Its own key: EventBridge and SQS are named in its policy, which the data stack's keys cannot get from
    // here without tying the two stacks in a cycle.
    this.key = new Key(this, 'EventsKey', {
      description: 'Service review: the event bus and the delivery queues (event ids, types, statuses)',
      alias: `${this.stackName}/events`,
      enableKeyRotation: true,
    });
    this.deadLetterQueue = ServiceEventsQueue.deadLetterQueue(this, 'DeadLetters', this.key);
    this.bus = new EventBus(this, 'Bus', {
      eventBusName: EVENT_BUS_NAME,
      description: 'Service review: the events of the outbox (docs/events.md)',
      kmsKey: this.key,
      deadLetterQueue: this.deadLetterQueue,
    });
    // The bus sends what it cannot encrypt or decrypt there: that bus only.
    this.deadLetterQueue.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('events.amazonaws.com')],
        actions: ['sqs:SendMessage'],
        resources: [this.deadLetterQueue.queueArn],
        conditions: { ArnEquals: { 'aws:SourceArn': this.bus.eventBusArn } },
      }),
    );
    this.pipe = new OutboxPipe(this, 'OutboxPipe', {
      table: data.table,
      bus: this.bus,
      pipeName: `${this.stackName}-outbox`,
      queueKey: this.key,
      logKey: data.keys.data,
    });
    this.deliveries = new ServiceEventsQueue(this, 'Deliveries', {
      bus: this.bus,
      key: this.key,
      consumerTimeout: QUEUE_CONSUMER_TIMEOUT,
      deadLetterQueue: this.deadLetterQueue,
    });
    for (const row of functions) this.addFunction(row, data);
  }

  private addFunction(row: EventFunction<WebhookDeliveryTrigger>, data: DataStack) {
    const { trigger } = row;
    const queued = 'serviceEvents' in trigger;
    const fn = new ServiceFunction(this, row.name, {
      handler: row.handler,
      invocation: queued ? 'queue' : 'event',
      logKey: data.keys.data,
      egress: 'internet',
      ...(queued
        ? {
            timeout: QUEUE_CONSUMER_TIMEOUT,
            concurrencyBound: `At most ${trigger.serviceEvents.maxConcurrency} invocations at once: the maximum concurrency of its SQS event source, which leaves the rest of the account's pool alone without reserving any.`,
          }
        : {
            concurrencyBound: `Started once every ${trigger.schedule.everyMinutes} minute(s) by its schedule; a sweep stops taking batches 90 s before its timeout, and sweeps that overlap skip the deliveries another one holds.`,
          }),
      // The secrets key's policy names its readers (encryption-keys.ts): a reader's role name is fixed.
      ...(row.access.webhookSecrets ? { roleName: secretsReaderRoleName(this.stackName, row.name) } : {}),
    });
    bindRouteAccess(fn, row.access, data);
    if ('serviceEvents' in trigger) {
      const { batchSize, maxConcurrency } = trigger.serviceEvents;
      fn.function.addEventSource(
        new SqsEventSource(this.deliveries.queue, { batchSize, maxConcurrency, reportBatchItemFailures: true }),
      );
    } else {
      // A missed sweep is the next one's to do: no retry of an old one behind it.
      fn.function.configureAsyncInvoke({ maxEventAge: Duration.minutes(5) });
      new Rule(this, `${row.name}Schedule`, {
        description: `${row.name} every ${trigger.schedule.everyMinutes} minute(s)`,
        schedule: Schedule.rate(Duration.minutes(trigger.schedule.everyMinutes)),
        targets: [
          new LambdaFunction(fn.function, {
            ...(fn.deadLetterQueue ? { deadLetterQueue: fn.deadLetterQueue } : {}),
            maxEventAge: Duration.minutes(1),
            retryAttempts: 0,
          }),
        ],
      });
    }
    this.functions[row.name] = fn;
  }
}
