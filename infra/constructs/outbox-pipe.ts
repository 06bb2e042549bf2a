import { Aws, Duration, Validations } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnPipe } from 'aws-cdk-lib/aws-pipes';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { serviceConfigOf } from '#infra/config';
import { EVENT_SOURCE, outboxStreamFilter, pipeTarget } from '#lib/events/bus-event';
import { ServiceRole, type UnscopedActions } from './service-function.ts';
import type { ServiceTable } from './service-table.ts';

/** A stream record older than this goes to the pipe's dead-letter queue instead of holding its shard back. */
export const PIPE_MAX_RECORD_AGE = Duration.hours(6);

/**
 * What to do when the dead-letter queue alarms (its alarm's description): the batch's events are still
 * outbox items, which the admin CLI puts on the bus again (docs/events.md, "Replaying events").
 */
export const OUTBOX_REPLAY_RUNBOOK =
  'docs/events.md#replaying-events: once the cause is fixed, npm run -s admin -- replay-events --since <the earliest arrival time in the message, or when OutboxPipe-failures first fired> (ADMIN_TARGET=aws; idempotent).';

/** EventBridge Pipes requires `dynamodb:ListStreams` of a DynamoDB stream source's role, which has no resource-level permissions. */
const LIST_STREAMS: UnscopedActions = {
  actions: ['dynamodb:ListStreams'],
  reason:
    "dynamodb:ListStreams supports no resource-level permissions; EventBridge Pipes requires it of a DynamoDB stream source's role. It names streams and reads no item.",
};

export interface OutboxPipeProps {
  /** Its stream is the source; reading it decrypts with the table's key. */
  table: ServiceTable;
  bus: IEventBus;
  pipeName: string;
  /** Encrypts the dead-letter queue (the events key). */
  queueKey: IKey;
  /** Encrypts the pipe's log group. */
  logKey: IKey;
}

/**
 * The outbox on AWS (docs/events.md, "On AWS"): an EventBridge Pipe from the table's stream, filtered to
 * inserts of outbox items, onto the service-review bus, the event's type as `detail-type` and the event
 * as `detail` (lib/events/bus-event.ts). At least once, in order per shard (from TRIM_HORIZON: a pipe
 * replaced later starts with what the stream still holds; deliveries de-duplicate). A batch PutEvents keeps
 * failing is retried until its records are PIPE_MAX_RECORD_AGE old, then goes to the dead-letter queue (shard
 * and sequence numbers: the outbox items themselves stay 7 days in the table). Errors are logged (no payload).
 * Its role may read that stream, put events on that bus, send to that queue and write those logs: nothing else.
 */
export class OutboxPipe extends Construct {
  readonly pipe: CfnPipe;
  readonly role: ServiceRole;
  readonly deadLetterQueue: Queue;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: OutboxPipeProps) {
    super(scope, id);
    const { table, bus, queueKey } = props;
    this.role = new ServiceRole(this, 'Role', {
      service: 'pipes.amazonaws.com',
      conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
      unscoped: LIST_STREAMS,
    });
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      // Holds batch descriptions (shard, sequence numbers), no item.
      encryption: QueueEncryption.KMS,
      encryptionMasterKey: queueKey,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "It is the outbox pipe's dead-letter queue.",
    });
    this.logGroup = new LogGroup(this, 'Logs', {
      encryptionKey: props.logKey,
      retention: serviceConfigOf(this).logRetention,
    });
    this.grantPipeAccess(props);

    this.pipe = new CfnPipe(this, 'Pipe', {
      name: props.pipeName,
      description: 'Outbox items from the table stream to the service-review event bus',
      roleArn: this.role.roleArn,
      source: table.table.tableStreamArn!,
      sourceParameters: {
        dynamoDbStreamParameters: {
          startingPosition: 'TRIM_HORIZON',
          batchSize: 10,
          maximumRecordAgeInSeconds: PIPE_MAX_RECORD_AGE.toSeconds(),
          maximumRetryAttempts: -1,
          onPartialBatchItemFailure: 'AUTOMATIC_BISECT',
          deadLetterConfig: { arn: this.deadLetterQueue.queueArn },
        },
        filterCriteria: { filters: [{ pattern: JSON.stringify(outboxStreamFilter) }] },
      },
      target: bus.eventBusArn,
      targetParameters: {
        inputTemplate: pipeTarget.inputTemplate,
        eventBridgeEventBusParameters: {
          source: EVENT_SOURCE,
          detailType: pipeTarget.detailType,
          time: pipeTarget.time,
        },
      },
      logConfiguration: {
        level: 'ERROR',
        cloudwatchLogsLogDestination: { logGroupArn: this.logGroup.logGroupArn },
      },
    });
    // The pipe checks its role when it is created: its policies first.
    this.pipe.node.addDependency(...this.role.policies);
  }

  private grantPipeAccess({ table, bus, queueKey }: OutboxPipeProps) {
    const grant = (actions: string[], resources: string[], conditions?: Record<string, unknown>) =>
      this.role.addToPrincipalPolicy(
        new PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) }),
      );
    grant(
      ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
      [table.table.tableStreamArn!],
    );
    grant([...LIST_STREAMS.actions], ['*']);
    // The stream is encrypted with the table's key, used through DynamoDB only.
    grant(['kms:Decrypt'], [table.encryptionKey.keyArn], {
      StringEquals: { 'kms:ViaService': `dynamodb.${Aws.REGION}.amazonaws.com` },
    });
    grant(['events:PutEvents'], [bus.eventBusArn]);
    grant(['sqs:SendMessage'], [this.deadLetterQueue.queueArn]);
    grant(['kms:Decrypt', 'kms:GenerateDataKey'], [queueKey.keyArn], {
      StringEquals: { 'kms:ViaService': `sqs.${Aws.REGION}.amazonaws.com` },
    });
    this.logGroup.grantWrite(this.role);
  }
}
