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
import { clientSettingsAttributes } from '#lib/entities/tenancy';
import { leadingKeysOf, TABLE_WRITE_ACTIONS, type TableAccess, type TableAction } from '#lib/routes/access-model';
import { PARTITION } from '#lib/routes/table-partitions';
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

/**
 * GetItem of any client partition's items (IAM cannot tell the client's own partition, where the Client item
 * is, from its others), but of a Client item's settings attributes alone and by projection (`dynamodb:Select`),
 * as the authorizer reads usageIdentifierKey: a request's document, a webhook's secret or a portal account's
 * credentials are never among them. The key attributes are named too, as DynamoDB requires.
 */
const grantClientSettingsRead = (fn: ServiceFunction, table: Table) => {
  fn.role.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['dynamodb:GetItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [PARTITION.anyClient] },
        'ForAllValues:StringEquals': {
          'dynamodb:Attributes': [TABLE_KEY.partition, TABLE_KEY.sort, ...clientSettingsAttributes],
        },
        StringEqualsIfExists: { 'dynamodb:Select': 'SPECIFIC_ATTRIBUTES' },
      },
    }),
  );
};

/** DynamoDB uses the table's key on the caller's behalf: every call decrypts, writes also encrypt. */
const READ_KEY_ACTIONS = ['kms:Decrypt', 'kms:DescribeKey'];
const WRITE_KEY_ACTIONS = ['kms:Encrypt', 'kms:GenerateDataKey'];

/**
 * The declared actions, grouped by the partitions they may touch: one group of every action (no
 * `leadingKeys`, or one list for all), or one per distinct list of a per-action `leadingKeys`, which must
 * name exactly the declared actions.
 */
export const actionsByPartitions = (access: TableAccess): Array<{ actions: TableAction[]; leadingKeys?: string[] }> => {
  const { actions, leadingKeys } = access;
  if (!leadingKeys) return [{ actions: [...actions] }];
  if (Array.isArray(leadingKeys)) return [{ actions: [...actions], leadingKeys: [...leadingKeys] }];
  const groups = new Map<string, { actions: TableAction[]; leadingKeys: string[] }>();
  for (const action of actions) {
    const patterns = [...new Set(leadingKeysOf(access, action))].sort();
    const group = groups.get(patterns.join('\n')) ?? { actions: [], leadingKeys: patterns };
    group.actions.push(action);
    groups.set(patterns.join('\n'), group);
  }
  return [...groups.values()];
};

/**
 * Tells a function which table to use (TABLE_NAME) and grants exactly the declared actions: on the
 * table's items (only those whose partition key matches `leadingKeys`, if given, per action if given so),
 * Query on the indexes of `queryIndexes` only, a Client item's settings by projection (`clientSettings`),
 * and the data key through DynamoDB, to encrypt only for a function that writes.
 */
export const bindTable = (fn: ServiceFunction, { table, encryptionKey }: ServiceTable, access: TableAccess) => {
  fn.addEnvironment('TABLE_NAME', table.tableName);
  for (const group of access.actions.length > 0 ? actionsByPartitions(access) : []) {
    fn.role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: group.actions.map((action) => `dynamodb:${action}`),
        resources: [table.tableArn],
        ...(group.leadingKeys
          ? { conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': group.leadingKeys } } }
          : {}),
      }),
    );
  }
  if (access.clientSettings) grantClientSettingsRead(fn, table);
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
