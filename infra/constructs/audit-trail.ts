import { Aws, CfnMapping, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { CfnTrail } from 'aws-cdk-lib/aws-cloudtrail';
import {
  type IRole,
  ManagedPolicy,
  PolicyStatement,
  type PolicyStatementProps,
  Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import {
  AppendDelimiterToRecordProcessor,
  CloudWatchLogProcessor,
  Compression,
  DecompressionProcessor,
  DeliveryStream,
  EnableLogging,
  S3Bucket,
  StreamEncryption,
} from 'aws-cdk-lib/aws-kinesisfirehose';
import { type IKey, Key } from 'aws-cdk-lib/aws-kms';
import { FilterPattern, type ILogGroup, LogGroup, SubscriptionFilter } from 'aws-cdk-lib/aws-logs';
import { FirehoseDestination } from 'aws-cdk-lib/aws-logs-destinations';
import { Bucket, BucketEncryption, type CfnBucket, ObjectLockRetention, StorageClass } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { ServiceConfig } from '#infra/config';
import { AUDIT_MARKER } from '#lib/audit/audit-record';
import { lockedDown } from './attachments-bucket.ts';

/** HIPAA § 164.316(b)(2)(i): documentation of the safeguards is kept six years; the trail alike. */
export const AUDIT_RETENTION_DAYS = 6 * 365;

/** Where Firehose writes the audit records (by delivery day), its failed records, and CloudTrail its files. */
export const AUDIT_PREFIXES = {
  records: 'audit/',
  failed: 'audit-errors/',
  cloudTrail: 'cloudtrail',
} as const;

/** The subscription filter's pattern: lines carrying the audit marker, nothing else (lib/audit/audit-record.ts). */
const auditFilterPattern = () => FilterPattern.stringValue(`$.${AUDIT_MARKER.field}`, '=', AUDIT_MARKER.value);

/** What CloudTrail records of the attachments bucket's objects (files and screenshots: PHI). */
export const OBJECT_EVENTS = ['GetObject', 'PutObject', 'DeleteObject'] as const;

export interface AuditTrailProps {
  config: ServiceConfig;
  /** The log groups whose audit lines are shipped: every function's. */
  logGroups: ReadonlyArray<{ name: string; logGroup: ILogGroup }>;
  /** CloudTrail records reads, writes and deletes of this bucket's objects. */
  attachmentsBucketName: string;
  /** Encrypts the delivery stream's own error log group (the data key, which CloudWatch Logs may use). */
  logKey: IKey;
}

/**
 * The deployed audit trail (docs/security.md, "Audit trail"): the functions' audit lines, matched by a
 * subscription filter on each function's log group, go through Kinesis Data Firehose into a bucket
 * under S3 Object Lock in compliance mode for six years (nobody, root included, can delete or
 * overwrite a record before then), KMS-encrypted with a key of its own; CloudTrail's data events of
 * the attachments bucket land in the same bucket under their own prefix. Nothing of the service
 * reads it; the Glue table and saved Athena queries are audit-queries.ts.
 */
export class AuditTrail extends Construct {
  readonly key: Key;
  readonly bucket: Bucket;
  readonly accessLogs: Bucket;
  readonly deliveryStream: DeliveryStream;
  readonly deliveryRole: Role;
  /** Firehose's own error log (failed writes, failed processing): no record in it. */
  readonly deliveryErrors: LogGroup;
  readonly subscriptionRole: Role;
  readonly subscriptions: SubscriptionFilter[];
  readonly trail: CfnTrail;

  constructor(scope: Construct, id: string, props: AuditTrailProps) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: 'Service review: the audit trail (records, CloudTrail data events, query results)',
      alias: `${Stack.of(this).stackName}/audit`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.accessLogs = auditAccessLogs(this);
    this.bucket = new Bucket(this, 'Bucket', {
      ...lockedDown,
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      objectLockEnabled: true,
      objectLockDefaultRetention: ObjectLockRetention.compliance(Duration.days(AUDIT_RETENTION_DAYS)),
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'audit-bucket/',
      // Athena reads Glacier Instant Retrieval as it reads Standard.
      lifecycleRules: [
        { transitions: [{ storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(90) }] },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'HIPAA.Security-S3BucketReplicationEnabled',
      reason:
        'Single-region deployment: versioning, Object Lock in compliance mode and S3 durability protect the records; cross-region replication is a disaster-recovery decision not taken yet.',
    });
    this.deliveryRole = this.deliveryStreamRole();
    this.deliveryErrors = new LogGroup(this, 'DeliveryErrors', {
      encryptionKey: props.logKey,
      retention: props.config.logRetention,
    });
    this.deliveryStream = this.delivery();
    this.subscriptionRole = this.subscriptionsRole();
    this.subscriptions = props.logGroups.map(
      ({ name, logGroup }) =>
        new SubscriptionFilter(this, `${name}Audit`, {
          logGroup,
          destination: new FirehoseDestination(this.deliveryStream, { role: immutable(this.subscriptionRole) }),
          filterPattern: auditFilterPattern(),
          filterName: 'audit-records',
        }),
    );
    // CloudWatch Logs sends a test record when the filter is created: the role must already be allowed.
    for (const filter of this.subscriptions) filter.node.addDependency(...this.subscriptionRole.node.children);
    this.trail = this.attachmentObjectEvents(props.attachmentsBucketName);
  }

  /**
   * Firehose's role: write records and failed records (never read, never delete), with the key through
   * S3 only, and its error log. Only Firehose of this account may assume it (sts:ExternalId, AWS's advice).
   */
  private deliveryStreamRole() {
    const role = new Role(this, 'DeliveryRole', {
      assumedBy: new ServicePrincipal('firehose.amazonaws.com', {
        conditions: { StringEquals: { 'sts:ExternalId': Aws.ACCOUNT_ID } },
      }),
    });
    const objects = [AUDIT_PREFIXES.records, AUDIT_PREFIXES.failed].map((prefix) =>
      this.bucket.arnForObjects(`${prefix}*`),
    );
    policyOf(role, 'DeliveryPolicy', [
      { actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: objects },
      {
        actions: ['s3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'],
        resources: [this.bucket.bucketArn],
      },
      {
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resources: [this.key.keyArn],
        conditions: {
          StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com` },
          // With S3 Bucket Keys the context is the bucket's ARN; an object's otherwise.
          StringLike: { 'kms:EncryptionContext:aws:s3:arn': [this.bucket.bucketArn, this.bucket.arnForObjects('*')] },
        },
      },
    ]);
    // As cdk-nag names the resources in its findings: the bucket's logical id in angle brackets.
    const bucketId = Stack.of(this).getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    Validations.of(role).acknowledge(
      ...[AUDIT_PREFIXES.records, AUDIT_PREFIXES.failed].map((prefix) => ({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
        reason:
          'Firehose names each object by delivery time (audit/dt=<day>/…): it may put objects under the prefixes of this one bucket, never read or delete them.',
      })),
    );
    return role;
  }

  /** The stream: CloudWatch Logs' gzipped batches unpacked to their messages, one JSON line each, gzipped objects. */
  private delivery() {
    policyOf(this.deliveryRole, 'DeliveryLogPolicy', [
      { actions: ['logs:PutLogEvents'], resources: [this.deliveryErrors.logGroupArn] },
    ]);
    const stream = new DeliveryStream(this, 'Delivery', {
      role: immutable(this.deliveryRole),
      encryption: StreamEncryption.customerManagedKey(this.key),
      destination: new S3Bucket(this.bucket, {
        role: immutable(this.deliveryRole),
        dataOutputPrefix: `${AUDIT_PREFIXES.records}dt=!{timestamp:yyyy-MM-dd}/`,
        errorOutputPrefix: `${AUDIT_PREFIXES.failed}!{firehose:error-output-type}/dt=!{timestamp:yyyy-MM-dd}/`,
        bufferingInterval: Duration.minutes(5),
        compression: Compression.GZIP,
        encryptionKey: this.key,
        loggingConfig: new EnableLogging(this.deliveryErrors),
        processors: [
          new DecompressionProcessor(),
          new CloudWatchLogProcessor({ dataMessageExtraction: true }),
          new AppendDelimiterToRecordProcessor(),
        ],
      }),
    });
    stream.node.addDependency(...this.deliveryRole.node.children);
    // DeliveryStream always maps Firehose's CIDR blocks per region for its `connections` (VPC
    // destinations), which nothing here uses: an unreferenced mapping CloudFormation's linter flags.
    const stack = Stack.of(this);
    for (const child of stack.node.children) {
      if (child instanceof CfnMapping && child.node.id.endsWith('aws-kinesisfirehose.CidrBlocks')) {
        stack.node.tryRemoveChild(child.node.id);
      }
    }
    return stream;
  }

  /** CloudWatch Logs' role for the subscriptions: put records into this stream, from this account's log groups. */
  private subscriptionsRole() {
    const role = new Role(this, 'SubscriptionRole', {
      assumedBy: new ServicePrincipal('logs.amazonaws.com', {
        conditions: {
          StringLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:*` },
        },
      }),
    });
    policyOf(role, 'SubscriptionPolicy', [
      {
        actions: ['firehose:PutRecord', 'firehose:PutRecordBatch'],
        resources: [this.deliveryStream.deliveryStreamArn],
      },
    ]);
    return role;
  }

  /**
   * CloudTrail data events of the attachments bucket's objects (OBJECT_EVENTS), presigned downloads and
   * uploads included: they are signed with a function's credentials but made by the client, whose
   * address CloudTrail records. Into the locked bucket, under its own prefix, with the audit key.
   */
  private attachmentObjectEvents(bucketName: string) {
    const stack = Stack.of(this);
    const trailName = `${stack.stackName}-attachment-objects`;
    const trailArn = `arn:${Aws.PARTITION}:cloudtrail:${Aws.REGION}:${Aws.ACCOUNT_ID}:trail/${trailName}`;
    const cloudTrail = new ServicePrincipal('cloudtrail.amazonaws.com');
    const fromThisTrail = { 'aws:SourceArn': trailArn };
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudTrail],
        actions: ['s3:GetBucketAcl'],
        resources: [this.bucket.bucketArn],
        conditions: { StringEquals: fromThisTrail },
      }),
    );
    this.bucket.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudTrail],
        actions: ['s3:PutObject'],
        resources: [this.bucket.arnForObjects(`${AUDIT_PREFIXES.cloudTrail}/AWSLogs/${Aws.ACCOUNT_ID}/*`)],
        conditions: { StringEquals: { 's3:x-amz-acl': 'bucket-owner-full-control', ...fromThisTrail } },
      }),
    );
    this.key.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudTrail],
        actions: ['kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: {
          StringEquals: fromThisTrail,
          StringLike: {
            'kms:EncryptionContext:aws:cloudtrail:arn': `arn:${Aws.PARTITION}:cloudtrail:*:${Aws.ACCOUNT_ID}:trail/*`,
          },
        },
      }),
    );
    this.key.addToResourcePolicy(
      new PolicyStatement({
        principals: [cloudTrail],
        actions: ['kms:DescribeKey'],
        resources: ['*'],
        conditions: { StringEquals: fromThisTrail },
      }),
    );
    const trail = new CfnTrail(this, 'AttachmentObjects', {
      trailName,
      isLogging: true,
      s3BucketName: this.bucket.bucketName,
      s3KeyPrefix: AUDIT_PREFIXES.cloudTrail,
      kmsKeyId: this.key.keyArn,
      enableLogFileValidation: true,
      isMultiRegionTrail: false,
      includeGlobalServiceEvents: false,
      advancedEventSelectors: [
        {
          name: 'Attachment objects read, written or deleted',
          fieldSelectors: [
            { field: 'eventCategory', equalTo: ['Data'] },
            { field: 'resources.type', equalTo: ['AWS::S3::Object'] },
            { field: 'resources.ARN', startsWith: [`arn:${Aws.PARTITION}:s3:::${bucketName}/`] },
            { field: 'eventName', equalTo: [...OBJECT_EVENTS] },
          ],
        },
      ],
    });
    if (this.bucket.policy) trail.node.addDependency(this.bucket.policy);
    Validations.of(trail).acknowledge({
      id: 'HIPAA.Security-CloudTrailCloudWatchLogsEnabled',
      reason:
        'The data events go to the Object Lock bucket, queried with Athena (audit-queries.ts); a CloudWatch Logs copy would be a second, deletable store of the same events.',
    });
    return trail;
  }
}

/** The audit bucket's server access logs (S3 delivers those only to SSE-S3 buckets): who read the trail. */
const auditAccessLogs = (scope: Construct) => {
  const bucket = new Bucket(scope, 'AccessLogs', {
    ...lockedDown,
    encryption: BucketEncryption.S3_MANAGED,
    lifecycleRules: [
      {
        transitions: [{ storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(90) }],
        expiration: Duration.days(AUDIT_RETENTION_DAYS),
        noncurrentVersionExpiration: Duration.days(30),
      },
    ],
  });
  Validations.of(bucket).acknowledge(
    {
      id: 'HIPAA.Security-S3DefaultEncryptionKMS',
      reason: 'S3 server access logging only delivers to buckets encrypted with SSE-S3, not SSE-KMS.',
    },
    {
      id: 'HIPAA.Security-S3BucketReplicationEnabled',
      reason: 'Single-region deployment; access logs are versioned and retained for six years in place.',
    },
    { id: 'AwsSolutions-S1', reason: 'The access-log bucket of the audit buckets: logging it would log itself.' },
    {
      id: 'HIPAA.Security-S3BucketLoggingEnabled',
      reason: 'The access-log bucket of the audit buckets: logging it would log itself.',
    },
  );
  return bucket;
};

/** A customer-managed policy (no inline policy: cdk-nag HIPAA.Security-IAMNoInlinePolicy) on the role. */
const policyOf = (role: Role, id: string, statements: PolicyStatementProps[]) =>
  new ManagedPolicy(role, id, { roles: [role], statements: statements.map((props) => new PolicyStatement(props)) });

/** The role as the L2 constructs see it: their broad grants (read-write, encrypt-decrypt) are not added. */
const immutable = (role: Role): IRole => role.withoutPolicyUpdates();
