import { Stack, Validations } from 'aws-cdk-lib';
import { Bucket, EventType, type IBucket, type NotificationKeyFilter } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function.ts';

/**
 * S3 ObjectCreated notifications from the data stack's bucket to functions of this stack. The
 * bucket is referenced by name so that CDK puts the notification resource in this stack: on the
 * bucket's own construct it would land in the data stack, which would then depend on these
 * functions while they depend on the data stack (a cycle).
 */
export class ObjectCreatedTriggers extends Construct {
  private readonly bucket: IBucket;

  constructor(scope: Construct, id: string, props: { bucketName: string }) {
    super(scope, id);
    this.bucket = Bucket.fromBucketName(this, 'Bucket', props.bucketName);
    Validations.of(this).acknowledge({
      id: 'HIPAA.Security-IAMNoInlinePolicy',
      reason:
        "CDK's bucket-notifications custom resource gets an inline policy limited to s3:PutBucketNotification on this bucket.",
    });
  }

  add(fn: ServiceFunction, filter: NotificationKeyFilter) {
    // No filter at all means every object: S3 (and CDK) refuse a filter with neither prefix nor suffix.
    const filters = filter.prefix || filter.suffix ? [filter] : [];
    this.bucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(fn.function), ...filters);
    // CDK applies the notifications with a singleton function of its own at stack level, created by the line above.
    const handler = Stack.of(this).node.children.find((child) =>
      child.node.id.startsWith('BucketNotificationsHandler'),
    );
    if (handler) {
      Validations.of(handler).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          "CDK's bucket-notifications handler (runs only during deployment) uses the basic execution managed policy.",
      });
    }
  }
}
