import { Aws, RemovalPolicy, Validations } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
} from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { TABLE_WRITE_ACTIONS, type TableAccess } from '#lib/routes/access-model';
import { TABLE_KEY, TTL_ATTRIBUTE, tableIndexes } from '#lib/table';
import type { ServiceFunction } from './service-function.ts';

/**
 * The single table, with the keys and indexes of lib/table.ts (the local stack creates the same), and
 * time to live on TTL_ATTRIBUTE: idempotency records go away after their 24 hours (readers check
 * the expiry themselves, since DynamoDB deletes late and dynalite never does). Its stream (new images)
 * carries the outbox items to the events stack's pipe (docs/events.md, "On AWS").
 */
export class ServiceTable extends Construct {
  readonly table: Table;
  readonly encryptionKey: IKey;

  constructor(scope: Construct, id: string, props: { encryptionKey: IKey }) {
    super(scope, id);
    this.encryptionKey = props.encryptionKey;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEY.partition, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEY.sort, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: props.encryptionKey,
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      stream: StreamViewType.NEW_IMAGE,
    });
    for (const index of tableIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partition, type: AttributeType.STRING },
        sortKey: { name: index.sort, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
    Validations.of(this.table).acknowledge({
      id: 'HIPAA.Security-DynamoDBInBackupPlan',
      reason:
        'Point-in-time recovery (continuous, 35-day restore window) is the backup; AWS Backup plans (vault lock, cross-account copies) belong to the account baseline.',
    });
  }
}

/** DynamoDB uses the table's key on the caller's behalf: every call decrypts, writes also encrypt. */
const READ_KEY_ACTIONS = ['kms:Decrypt', 'kms:DescribeKey'];
const WRITE_KEY_ACTIONS = ['kms:Encrypt', 'kms:GenerateDataKey'];

/**
 * Tells a function which table to use (TABLE_NAME) and grants exactly the declared actions: on the
 * table's items (only those whose partition key matches `leadingKeys`, if given), Query on gsi1 only
 * on the indexes of `queryIndexes`, and the data key through DynamoDB, to encrypt only for a function that writes.
 */
export const bindTable = (fn: ServiceFunction, { table, encryptionKey }: ServiceTable, access: TableAccess) => {
  fn.addEnvironment('TABLE_NAME', table.tableName);
  if (access.actions.length > 0) {
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: access.actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn],
        ...(access.leadingKeys
          ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...access.leadingKeys] } } }
          : {}),
      }),
    );
  }
  if (access.queryIndexes?.length) {
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: access.queryIndexes.map((index) => `${table.tableArn}/index/${index}`),
      }),
    );
  }
  const writes = access.actions.some((action) => TABLE_WRITE_ACTIONS.includes(action));
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: writes ? [...READ_KEY_ACTIONS, ...WRITE_KEY_ACTIONS] : READ_KEY_ACTIONS,
      resources: [encryptionKey.keyArn],
      // Only through DynamoDB: the function cannot use the data key directly.
      conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Aws.REGION}.amazonaws.com` } },
    }),
  );
};
