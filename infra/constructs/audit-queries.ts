import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import { CfnNamedQuery, CfnWorkGroup } from 'aws-cdk-lib/aws-athena';
import { CfnDatabase, CfnTable } from 'aws-cdk-lib/aws-glue';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Bucket, BucketEncryption, type IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { AUDIT_MARKER, AUDIT_RECORD_FIELDS } from '#lib/audit/audit-record';
import { routeAudit } from '#lib/routes/audit-spec';
import type { Route } from '#lib/routes/route-table';
import { lockedDown } from './attachments-bucket.ts';
import { AUDIT_PREFIXES } from './audit-trail.ts';

export interface AuditQueriesProps {
  /** The locked bucket the trail delivers to, and its key. */
  bucket: IBucket;
  key: IKey;
  /** Where the query results bucket's access logs go. */
  accessLogs: IBucket;
  /** The route table: the record's id names (`resource.ids`) are its columns. */
  routes: readonly Route[];
}

/** The first day a trail can hold: partition projection enumerates days from here. */
const FIRST_DAY = '2026-01-01';
const JSON_LINES = {
  inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
  outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
};

/** Every id name the route table's audits record: one string each, a list for body ids (a batch's requests). */
const resourceIdsType = (routes: readonly Route[]) => {
  const single = new Set<string>();
  const lists = new Set<string>();
  for (const { handler } of routes) {
    const audit = routeAudit[handler];
    if (!audit) continue;
    for (const name of Object.values(audit.ids ?? {})) single.add(name);
    if (audit.createdId) single.add(audit.createdId);
    for (const name of Object.values(audit.bodyIds ?? {})) lists.add(name);
  }
  const fields = [
    ...[...single].sort().map((name) => `${name.toLowerCase()}:string`),
    ...[...lists].sort().map((name) => `${name.toLowerCase()}:array<string>`),
  ];
  return `struct<${fields.join(',')}>`;
};

/** The Glue column of each record field (lower case, as Athena names them; the JSON SerDe matches any case). */
const recordColumns = (routes: readonly Route[]) => {
  const types: Record<(typeof AUDIT_RECORD_FIELDS)[number], string> = {
    phase: 'string',
    time: 'string',
    action: 'string',
    route: 'string',
    outcome: 'int',
    clientId: 'string',
    credential: 'string',
    keyId: 'string',
    clientUserId: 'string',
    resource: `struct<type:string,ids:${resourceIdsType(routes)}>`,
    requestId: 'string',
    lambdaRequestId: 'string',
    sourceIp: 'string',
  };
  return [
    { name: AUDIT_MARKER.field, type: 'string', comment: `The record's format: ${AUDIT_MARKER.value}` },
    ...AUDIT_RECORD_FIELDS.map((field) => ({ name: field.toLowerCase(), type: types[field] })),
  ];
};

/** The CloudTrail columns the queries read (the JSON SerDe ignores the others). */
const OBJECT_EVENT_COLUMNS = [
  ['eventtime', 'string'],
  ['eventname', 'string'],
  ['eventsource', 'string'],
  [
    'useridentity',
    'struct<type:string,principalid:string,arn:string,accountid:string,sessioncontext:struct<sessionissuer:struct<type:string,arn:string,username:string>>>',
  ],
  ['sourceipaddress', 'string'],
  ['useragent', 'string'],
  ['errorcode', 'string'],
  ['requestparameters', 'string'],
  ['requestid', 'string'],
  ['eventid', 'string'],
  ['readonly', 'string'],
  ['resources', 'array<struct<arn:string,accountid:string,type:string>>'],
  ['eventcategory', 'string'],
  ['tlsdetails', 'struct<tlsversion:string,ciphersuite:string,clientprovidedhostheader:string>'],
].map(([name, type]) => ({ name: name!, type: type! }));

/**
 * Querying the trail with Athena: a Glue database with a table over the delivered records (JSON lines,
 * partitioned by delivery day through partition projection: no crawler, no partitions to add) and one
 * over CloudTrail's data events, a workgroup whose results are encrypted with the audit key in a bucket
 * of their own (results expire after 30 days; the locked bucket would keep them six years), and the
 * saved queries of docs/security.md. Reading needs s3:GetObject on the audit bucket and kms:Decrypt on
 * its key, which no role of the service has.
 */
export class AuditQueries extends Construct {
  readonly database: CfnDatabase;
  readonly records: CfnTable;
  readonly objectEvents: CfnTable;
  readonly results: Bucket;
  readonly workGroup: CfnWorkGroup;
  readonly queries: CfnNamedQuery[];

  constructor(scope: Construct, id: string, props: AuditQueriesProps) {
    super(scope, id);
    const databaseName = `${Stack.of(this)
      .stackName.replace(/([a-z])([A-Z])/g, '$1_$2')
      .toLowerCase()}`;
    this.database = new CfnDatabase(this, 'Database', {
      catalogId: Aws.ACCOUNT_ID,
      databaseInput: { name: databaseName, description: 'Service review audit trail (docs/security.md)' },
    });
    this.records = this.recordsTable(props, databaseName);
    this.objectEvents = this.objectEventsTable(props, databaseName);
    this.results = new Bucket(this, 'Results', {
      ...lockedDown,
      encryption: BucketEncryption.KMS,
      encryptionKey: props.key,
      bucketKeyEnabled: true,
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 'query-results/',
      lifecycleRules: [{ expiration: Duration.days(30), noncurrentVersionExpiration: Duration.days(1) }],
    });
    Validations.of(this.results).acknowledge({
      id: 'HIPAA.Security-S3BucketReplicationEnabled',
      reason: 'Query results, kept 30 days: the records they come from are in the locked bucket.',
    });
    this.workGroup = new CfnWorkGroup(this, 'WorkGroup', {
      name: databaseName.replaceAll('_', '-'),
      description: 'Queries of the service review audit trail',
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        resultConfiguration: {
          outputLocation: this.results.s3UrlForObject('results/'),
          encryptionConfiguration: { encryptionOption: 'SSE_KMS', kmsKey: props.key.keyArn },
        },
      },
    });
    this.queries = savedQueries(databaseName).map(({ id, name, description, sql }) => {
      const query = new CfnNamedQuery(this, id, {
        name,
        description,
        database: databaseName,
        workGroup: this.workGroup.name,
        queryString: sql,
      });
      query.node.addDependency(this.workGroup, this.database);
      return query;
    });
  }

  /** The audit records as Firehose delivers them: audit/dt=<delivery day>/…gz, one JSON line each. */
  private recordsTable(props: AuditQueriesProps, databaseName: string) {
    const location = `s3://${props.bucket.bucketName}/${AUDIT_PREFIXES.records}`;
    const table = new CfnTable(this, 'Records', {
      catalogId: Aws.ACCOUNT_ID,
      databaseName,
      tableInput: {
        name: 'records',
        description: 'Audit records (lib/audit/audit-record.ts): an intent and an outcome per audited API call',
        tableType: 'EXTERNAL_TABLE',
        partitionKeys: [{ name: 'dt', type: 'string', comment: 'The delivery day (UTC), yyyy-MM-dd' }],
        parameters: {
          classification: 'json',
          has_encrypted_data: 'true',
          'projection.enabled': 'true',
          'projection.dt.type': 'date',
          'projection.dt.format': 'yyyy-MM-dd',
          'projection.dt.range': `${FIRST_DAY},NOW`,
          'projection.dt.interval': '1',
          'projection.dt.interval.unit': 'DAYS',
          'storage.location.template': `${location}dt=\${dt}/`,
        },
        storageDescriptor: {
          location,
          ...JSON_LINES,
          columns: recordColumns(props.routes),
          serdeInfo: {
            serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
            // A blank line between delivered batches is no record; anything else unreadable would show as empty rows.
            parameters: { 'case.insensitive': 'TRUE', 'ignore.malformed.json': 'TRUE' },
          },
        },
      },
    });
    table.node.addDependency(this.database);
    return table;
  }

  /** CloudTrail's files: cloudtrail/AWSLogs/<account>/CloudTrail/<region>/yyyy/MM/dd/…json.gz. */
  private objectEventsTable(props: AuditQueriesProps, databaseName: string) {
    const location = `s3://${props.bucket.bucketName}/${AUDIT_PREFIXES.cloudTrail}/AWSLogs/${Aws.ACCOUNT_ID}/CloudTrail/${Aws.REGION}/`;
    const table = new CfnTable(this, 'ObjectEvents', {
      catalogId: Aws.ACCOUNT_ID,
      databaseName,
      tableInput: {
        name: 'attachment_object_events',
        description: "CloudTrail data events of the attachments bucket's objects (GetObject, PutObject, DeleteObject)",
        tableType: 'EXTERNAL_TABLE',
        partitionKeys: [
          { name: 'day', type: 'string', comment: 'The day CloudTrail filed the event (UTC), yyyy/MM/dd' },
        ],
        parameters: {
          classification: 'cloudtrail',
          has_encrypted_data: 'true',
          'projection.enabled': 'true',
          'projection.day.type': 'date',
          'projection.day.format': 'yyyy/MM/dd',
          'projection.day.range': `${FIRST_DAY.replaceAll('-', '/')},NOW`,
          'projection.day.interval': '1',
          'projection.day.interval.unit': 'DAYS',
          'storage.location.template': `${location}\${day}/`,
        },
        storageDescriptor: {
          location,
          inputFormat: 'com.amazon.emr.cloudtrail.CloudTrailInputFormat',
          outputFormat: JSON_LINES.outputFormat,
          columns: OBJECT_EVENT_COLUMNS,
          serdeInfo: { serializationLibrary: 'org.apache.hive.hcatalog.data.JsonSerDe' },
        },
      },
    });
    table.node.addDependency(this.database);
    return table;
  }
}

/**
 * The saved queries (Athena's console lists them under the workgroup; `?` are its execution
 * parameters, asked for when the query runs). External ids are the client's own, so every answer
 * names the client: two clients may use the same id.
 */
const savedQueries = (database: string) => [
  {
    id: 'WhoTouchedRequest',
    name: 'Who touched request X',
    description: 'Every audited API call that named a request (its external id), with who made it and how it ended',
    sql: `-- Who touched request X: every audited call naming the request, directly or in a batch.
-- Parameters: the request's external id, twice. Every delivery day is read; add "AND dt BETWEEN 'yyyy-MM-dd' AND 'yyyy-MM-dd'" to read fewer.
-- An intent without an outcome (same requestid) is a call that timed out or crashed in its handler.
SELECT "time", phase, action, outcome, clientid, credential, keyid, clientuserid, sourceip, requestid, lambdarequestid, resource.ids
FROM "${database}"."records"
WHERE resource.ids.requestexternalid = ?
   OR contains(resource.ids.requestexternalids, ?)
ORDER BY "time", requestid`,
  },
  {
    id: 'ClientDay',
    name: 'Everything client Y did on day Z',
    description: 'Every audited API call of one client on one day (UTC), in order',
    sql: `-- Everything client Y did on day Z (UTC).
-- Parameters: the client id, then the day as yyyy-MM-dd three times (a record is delivered up to minutes
-- after it is written, so the next delivery day is read too).
SELECT "time", phase, action, route, outcome, credential, keyid, clientuserid, resource, sourceip, requestid
FROM "${database}"."records"
WHERE clientid = ?
  AND dt BETWEEN ? AND date_format(date_add('day', 1, date(?)), '%Y-%m-%d')
  AND substr("time", 1, 10) = ?
ORDER BY "time", requestid`,
  },
  {
    id: 'RequestObjects',
    name: "S3 reads, writes and deletes of request X's files",
    description:
      'CloudTrail data events of the attachment objects of one request, presigned downloads and uploads included',
    sql: `-- The attachment files of request X as S3 saw them: downloads through presigned URLs (signed by a function,
-- made from the client's address), uploads, deletes. Parameters: the client id, then the request's external id.
SELECT eventtime, eventname, errorcode, sourceipaddress, useragent, json_extract_scalar(requestparameters, '$.key') AS object_key, useridentity.sessioncontext.sessionissuer.arn AS signed_by_role, requestid
FROM "${database}"."attachment_object_events"
WHERE starts_with(json_extract_scalar(requestparameters, '$.key'), concat(?, '/requests/', ?, '/attachments/'))
ORDER BY eventtime`,
  },
];
