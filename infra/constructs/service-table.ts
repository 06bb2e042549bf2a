import { Aws, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { RouteAccess } from '#lib/routes';
import { GSI1, TABLE_KEY, TTL_ATTRIBUTE } from '#lib/table';
import type { ServiceFunction } from './service-function.ts';

/**
 * The single table, with the keys and index of lib/table.ts (the local stack creates the same), and
 * time to live on TTL_ATTRIBUTE: idempotency records go away after their 24 hours (readers check
 * the expiry themselves, since DynamoDB deletes late and dynalite never does).
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
    });
    this.table.addGlobalSecondaryIndex({
      indexName: GSI1.name,
      partitionKey: { name: GSI1.partition, type: AttributeType.STRING },
      sortKey: { name: GSI1.sort, type: AttributeType.STRING },
      projectionType: ProjectionType.ALL,
    });
    Validations.of(this.table).acknowledge({
      id: 'HIPAA.Security-DynamoDBInBackupPlan',
      reason:
        'Point-in-time recovery (continuous, 35-day restore window) is the backup; AWS Backup plans (vault lock, cross-account copies) belong to the account baseline.',
    });
  }
}

type TableMode = NonNullable<RouteAccess['table']>;

/**
 * The item operations the data layer uses: single-item conditional writes, gets and queries. No
 * scans, transactions or streams.
 */
const ITEM_ACTIONS: Record<TableMode, string[]> = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  readWrite: [
    'dynamodb:GetItem',
    'dynamodb:BatchGetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:DeleteItem',
    'dynamodb:BatchWriteItem',
  ],
};

/** DynamoDB uses the table's key on the caller's behalf: reads need Decrypt, writes also encrypt. */
const KEY_ACTIONS: Record<TableMode, string[]> = {
  read: ['kms:Decrypt', 'kms:DescribeKey'],
  readWrite: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey'],
};

/** Tells a function which table to use (TABLE_NAME) and grants exactly `mode` on it and its index. */
export const bindTable = (fn: ServiceFunction, { table, encryptionKey }: ServiceTable, mode: TableMode) => {
  fn.addEnvironment('TABLE_NAME', table.tableName);
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ITEM_ACTIONS[mode],
      resources: [table.tableArn, `${table.tableArn}/index/${GSI1.name}`],
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: KEY_ACTIONS[mode],
      resources: [encryptionKey.keyArn],
      // Only through DynamoDB: the function cannot use the data key directly.
      conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Aws.REGION}.amazonaws.com` } },
    }),
  );
};

/**
 * The authorizer's one write: lastUsedAt on API-key items (partition key `APIKEY#…`), and no other
 * attribute; the keys must be listed since DynamoDB counts them among a request's attributes.
 */
export const bindApiKeyUsage = (fn: ServiceFunction, { table, encryptionKey }: ServiceTable) => {
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*'] },
        'ForAllValues:StringEquals': { 'dynamodb:Attributes': [TABLE_KEY.partition, TABLE_KEY.sort, 'lastUsedAt'] },
        StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
      },
    }),
  );
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['kms:Encrypt', 'kms:GenerateDataKey'],
      resources: [encryptionKey.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Aws.REGION}.amazonaws.com` } },
    }),
  );
};
