import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  HttpMethods,
  ObjectOwnership,
  StorageClass,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { keys } from '#lib/object-keys';
import type { RouteAccess } from '#lib/routes/access-model';
import type { ServiceFunction } from './service-function.ts';

/** Settings every bucket shares: private, TLS 1.2+ only, owner-enforced, versioned, kept on stack deletion. */
export const lockedDown = {
  blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
  enforceSSL: true,
  minimumTLSVersion: 1.2,
  objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
  versioned: true,
  removalPolicy: RemovalPolicy.RETAIN,
} as const;

/**
 * The attachments bucket's name, unique per account and region. Functions get permissions on it
 * by this name, built from pseudo parameters in their own stack rather than by a cross-stack
 * reference, so their policies read the same in the template and in cdk-nag's findings.
 */
const attachmentsBucketName = (dataStackName: string, account: string, region: string) =>
  `${dataStackName.toLowerCase()}-attachments-${account}-${region}`;

/**
 * Attachment files (SSE-KMS with the data key) and the bucket that receives their server access
 * logs. Noncurrent versions are kept briefly to undo an accidental overwrite; a DELETE through the
 * API removes every version at once, so "delete" stays permanent.
 */
export class AttachmentsBucket extends Construct {
  readonly bucket: Bucket;
  readonly bucketName: string;
  readonly encryptionKey: IKey;
  /** The name as cdk-nag writes it in a finding (pseudo parameters in angle brackets). */
  readonly bucketNameInFindings: string;

  constructor(scope: Construct, id: string, props: { encryptionKey: IKey }) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;
    this.bucketName = attachmentsBucketName(stackName, Aws.ACCOUNT_ID, Aws.REGION);
    this.bucketNameInFindings = attachmentsBucketName(stackName, '<AWS::AccountId>', '<AWS::Region>');
    this.encryptionKey = props.encryptionKey;
    const accessLogs = new Bucket(this, 'AccessLogs', {
      ...lockedDown,
      // S3 delivers server access logs only to SSE-S3 buckets.
      encryption: BucketEncryption.S3_MANAGED,
      lifecycleRules: [
        {
          transitions: [{ storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(90) }],
          // HIPAA asks for six years of audit records.
          expiration: Duration.days(6 * 365),
          noncurrentVersionExpiration: Duration.days(30),
        },
      ],
    });
    Validations.of(accessLogs).acknowledge(
      {
        id: 'HIPAA.Security-S3DefaultEncryptionKMS',
        reason: 'S3 server access logging only delivers to buckets encrypted with SSE-S3, not SSE-KMS.',
      },
      {
        id: 'HIPAA.Security-S3BucketReplicationEnabled',
        reason: 'Single-region deployment; access logs are versioned and retained for six years in place.',
      },
    );

    this.bucket = new Bucket(this, 'Bucket', {
      ...lockedDown,
      bucketName: this.bucketName,
      encryption: BucketEncryption.KMS,
      encryptionKey: props.encryptionKey,
      bucketKeyEnabled: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'attachments/',
      lifecycleRules: [
        {
          noncurrentVersionExpiration: Duration.days(30),
          expiredObjectDeleteMarker: true,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      // Browsers upload large files straight to S3 with a presigned PUT; the signature is the
      // credential, so any origin may PUT, but only with the headers the presigned request signs.
      cors: [
        {
          allowedMethods: [HttpMethods.PUT],
          allowedOrigins: ['*'],
          allowedHeaders: ['content-type', 'content-md5', 'x-amz-checksum-sha256', 'x-amz-sdk-checksum-algorithm'],
          exposedHeaders: ['etag'],
          maxAge: 3600,
        },
      ],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'HIPAA.Security-S3BucketReplicationEnabled',
      reason:
        'Single-region deployment: versioning and S3 durability protect the files; cross-region replication is a disaster-recovery decision not taken yet.',
    });
  }
}

type BucketAccess = NonNullable<RouteAccess['bucket']>[number];

/**
 * Object actions per access kind. A presigned URL is executed with the signer's permissions, so
 * `presign` needs PutObject. `delete` also removes versions: deleting an attachment is permanent.
 */
const OBJECT_ACTIONS: Record<BucketAccess, string[]> = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject'],
  delete: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
  presign: ['s3:PutObject'],
};

/** SSE-KMS: reading decrypts, writing asks KMS for a data key (S3 calls KMS as the caller). */
const KEY_ACTIONS: Record<BucketAccess, string[]> = {
  read: ['kms:Decrypt'],
  write: ['kms:GenerateDataKey'],
  delete: [],
  presign: ['kms:GenerateDataKey'],
};

const unique = (lists: string[][]) => [...new Set(lists.flat())];

/**
 * Tells a function which bucket to use (BUCKET_NAME) and grants exactly the listed actions, on
 * attachment objects only (keys of the shape lib/object-keys.ts builds).
 */
export const bindBucket = (fn: ServiceFunction, attachments: AttachmentsBucket, access: readonly BucketAccess[]) => {
  const { bucketName, bucketNameInFindings, encryptionKey } = attachments;
  fn.addEnvironment('BUCKET_NAME', bucketName);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: unique(access.map((kind) => OBJECT_ACTIONS[kind])),
      resources: [`arn:${Aws.PARTITION}:s3:::${bucketName}/${keys.attachmentObjectPattern}`],
    }),
  );
  // Listing, never of the whole bucket: only with an s3:prefix of attachment keys.
  const attachmentKeysOnly = { StringLike: { 's3:prefix': keys.attachmentObjectPattern } };
  if (access.includes('read')) {
    // Without ListBucket, S3 answers a missing key with 403 AccessDenied instead of 404 NoSuchKey, and
    // readers could not tell "gone" from "forbidden". Keys hold ids only (lib/object-keys.ts), never PHI.
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [`arn:${Aws.PARTITION}:s3:::${bucketName}`],
        conditions: attachmentKeysOnly,
      }),
    );
  }
  if (access.includes('delete')) {
    // A permanent delete first lists the versions of exactly that object key.
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucketVersions'],
        resources: [`arn:${Aws.PARTITION}:s3:::${bucketName}`],
        conditions: attachmentKeysOnly,
      }),
    );
  }
  const keyActions = unique(access.map((kind) => KEY_ACTIONS[kind]));
  if (keyActions.length > 0) {
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: keyActions,
        resources: [encryptionKey.keyArn],
        // Only through S3: the function cannot use the data key directly.
        conditions: { StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com` } },
      }),
    );
  }
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${bucketNameInFindings}/${keys.attachmentObjectPattern}]`,
    reason:
      "Attachment keys start with the caller's clientId, known only per request: tenancy is enforced by lib/object-keys.ts deriving every key from the authorizer's clientId; IAM limits the function to attachment objects of this one bucket.",
  });
};

/** IAM resource pattern of RPA screenshots, `<clientId>/rpa/<runId>/<n>.png` (docs/rpa.md). */
const screenshotObjectPattern = '*/rpa/*';

/**
 * `screenshots` access: BUCKET_NAME and the listed actions on RPA screenshot objects only (SSE-KMS
 * with the data key, through S3), never on attachments.
 */
export const bindScreenshots = (
  fn: ServiceFunction,
  attachments: AttachmentsBucket,
  access: NonNullable<RouteAccess['screenshots']>,
) => {
  const { bucketName, bucketNameInFindings, encryptionKey } = attachments;
  fn.addEnvironment('BUCKET_NAME', bucketName);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: unique(access.map((kind) => OBJECT_ACTIONS[kind])),
      resources: [`arn:${Aws.PARTITION}:s3:::${bucketName}/${screenshotObjectPattern}`],
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: unique(access.map((kind) => KEY_ACTIONS[kind])),
      resources: [encryptionKey.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com` } },
    }),
  );
  Validations.of(fn.role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${bucketNameInFindings}/${screenshotObjectPattern}]`,
    reason:
      "Screenshot keys start with the run's clientId and runId, known only per run: tenancy is enforced by the keys the worker derives from its input; IAM limits it to RPA screenshots of this one bucket.",
  });
};
