import { Duration } from 'aws-cdk-lib';
import { type IEventBus, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type IQueue, Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { EVENT_TYPES } from '#lib/entities/service-event';
import { EVENT_SOURCE } from '#lib/events/bus-event';

/**
 * Receives of a message before it moves to the dead-letter queue. A message fails only when its event
 * could not be read or recorded (lib/webhooks/queued-events.ts): a receiver's failure is a recorded
 * attempt, retried by the delivery's own schedule for about 23.6 hours (lib/webhooks/delivery-records.ts).
 * So SQS retries only the hand-over: five receives, a visibility timeout apart (9 minutes with the
 * delivery function's 90 s), about 45 minutes, and the event is recorded or in the dead-letter queue,
 * which alarms; then the day of the delivery's own retries begins. About a day end to end.
 */
export const MAX_RECEIVE_COUNT = 5;
/** SQS's advice for a Lambda consumer: at least six times the function's timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

export interface ServiceEventsQueueProps {
  bus: IEventBus;
  /** Encrypts both queues (the events key: EventBridge may use it to send). */
  key: IKey;
  /** The consuming function's timeout. */
  consumerTimeout: Duration;
  /** Made first (`ServiceEventsQueue.deadLetterQueue`): the bus names it too. */
  deadLetterQueue: IQueue;
}

/**
 * The delivery side of the bus (docs/webhooks.md, "On AWS"): a rule on the service-review bus for every
 * event type of the pipe's source, targeting an SQS queue (KMS, TLS only) that the delivery function
 * consumes; a dead-letter queue (KMS, TLS only, 14 days) for messages received MAX_RECEIVE_COUNT times, for
 * events EventBridge could not put on the queue (its retries: 24 hours), and for the bus's own encryption
 * failures. Every message in it is an event of the bus: redrive it to the queue once the cause is fixed.
 */
export class ServiceEventsQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: IQueue;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: ServiceEventsQueueProps) {
    super(scope, id);
    this.deadLetterQueue = props.deadLetterQueue;
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: props.key,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(props.consumerTimeout.toSeconds() * VISIBILITY_TIMEOUT_FACTOR),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: props.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
    this.rule = new Rule(this, 'Rule', {
      description: 'Every service event of the outbox, to the webhook delivery queue',
      eventBus: props.bus,
      eventPattern: { source: [EVENT_SOURCE], detailType: [...EVENT_TYPES] },
      targets: [new SqsQueue(this.queue, { deadLetterQueue: props.deadLetterQueue })],
    });
  }

  /** The dead-letter queue of the bus and the queue: created first, since the bus names it. */
  static deadLetterQueue(scope: Construct, id: string, key: IKey): Queue {
    return new Queue(scope, id, {
      // Events of the bus: ids, codes and statuses, never patient data.
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: key,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
  }
}
