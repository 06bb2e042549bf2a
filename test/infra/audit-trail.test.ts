import { Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_PREFIXES, AUDIT_RETENTION_DAYS, OBJECT_EVENTS } from '#infra/constructs/audit-trail';
import { DELIVERY_FRESHNESS_THRESHOLD_SECONDS } from '#infra/constructs/monitoring';
import { ServiceFunction } from '#infra/constructs/service-function';
import { AUDIT_MARKER, AUDIT_RECORD_FIELDS } from '#lib/audit/audit-record';
import { logicalIdOf, resourceNamedBy, synthesize } from './synthesized-app.ts';

/*
 * The deployed audit trail (infra/audit-stack.ts): the locked bucket, the delivery from every
 * function's log group, CloudTrail's data events, the queries, the alarms, and who may do what. On
 * the whole app with both cdk-nag packs (a finding fails synthesis); bundling is skipped.
 */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; DependsOn?: string[] };
let app: ReturnType<typeof synthesize>;
beforeAll(() => {
  app = synthesize({ context: NO_BUNDLING });
}, 180_000);
afterAll(() => app?.cleanUp());

const resources = (template: 'auditTemplate' | 'automationTemplate' | 'eventsTemplate' | 'monitoringTemplate') =>
  app[template].toJSON().Resources as Record<string, Resource>;
/** The resources of the API stack and of its areas (the routes' functions). */
const apiResources = () =>
  app.apiTemplates.flatMap((template) => Object.values(template.toJSON().Resources as Record<string, Resource>));
const ofType = (type: string) => Object.values(resources('auditTemplate')).filter((r) => r.Type === type);
const one = (type: string) => {
  const found = ofType(type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};
const ref = (construct: { node: { defaultChild?: unknown } }) => logicalIdOf(construct);
const getAtt = (construct: { node: { defaultChild?: unknown } }) => ({ 'Fn::GetAtt': [ref(construct), 'Arn'] });
const functions = () =>
  [app.api, app.automation, app.events].flatMap((stack) =>
    stack.node.findAll().filter((construct): construct is ServiceFunction => construct instanceof ServiceFunction),
  );

describe('the audit bucket', () => {
  it('locks every object in compliance mode for six years: nobody, root included, deletes or overwrites a record', () => {
    const bucket = resources('auditTemplate')[ref(app.audit.trail.bucket)]!;
    expect(AUDIT_RETENTION_DAYS).toBe(2190);
    expect(bucket.Properties).toMatchObject({
      ObjectLockEnabled: true,
      ObjectLockConfiguration: {
        ObjectLockEnabled: 'Enabled',
        Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: 2190 } },
      },
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: getAtt(app.audit.trail.key) },
          },
        ],
      },
      LoggingConfiguration: { DestinationBucketName: { Ref: ref(app.audit.trail.accessLogs) } },
    });
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(resources('auditTemplate')[ref(app.audit.trail.key)]).toMatchObject({
      Properties: { EnableKeyRotation: true },
      DeletionPolicy: 'Retain',
    });
  });

  it('refuses anything but TLS 1.2+, and lets CloudTrail write only its own files, only from this trail', () => {
    const [policy] = ofType('AWS::S3::BucketPolicy').filter(
      (p) => p.Properties.Bucket.Ref === ref(app.audit.trail.bucket),
    );
    const statements = policy!.Properties.PolicyDocument.Statement as any[];
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({ Effect: 'Deny', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
      ]),
    );
    const allowed = statements.filter((statement) => statement.Effect === 'Allow');
    expect(allowed.map((statement) => [statement.Principal, statement.Action])).toEqual([
      [{ Service: 'cloudtrail.amazonaws.com' }, 's3:GetBucketAcl'],
      [{ Service: 'cloudtrail.amazonaws.com' }, 's3:PutObject'],
    ]);
    for (const statement of allowed) {
      expect(JSON.stringify(statement.Condition.StringEquals['aws:SourceArn'])).toContain(
        `:trail/${app.audit.stackName}-attachment-objects`,
      );
    }
    expect(JSON.stringify(allowed[1].Resource)).toContain(`/${AUDIT_PREFIXES.cloudTrail}/AWSLogs/`);
  });
});

describe('delivery', () => {
  it('subscribes every function’s log group, with the audit marker as the filter pattern', () => {
    const filters = ofType('AWS::Logs::SubscriptionFilter');
    expect(filters).toHaveLength(functions().length);
    for (const filter of filters) {
      expect(filter.Properties).toMatchObject({
        FilterPattern: `{ $.${AUDIT_MARKER.field} = "${AUDIT_MARKER.value}" }`,
        DestinationArn: getAtt(app.audit.trail.deliveryStream),
        RoleArn: getAtt(app.audit.trail.subscriptionRole),
      });
    }
    // Each function's own log group, once: the output each filter reads, followed to the resource it names.
    const logGroups = filters.map((filter) => resourceNamedBy(app.audit, filter.Properties.LogGroupName));
    for (const fn of functions()) {
      const logGroup = `${Stack.of(fn).node.path}/${logicalIdOf(fn.function.logGroup)}`;
      expect(
        logGroups.filter((group) => group === logGroup),
        fn.node.id,
      ).toHaveLength(1);
    }
  });

  it('goes through Firehose into the bucket: encrypted with the audit key, unpacked to one JSON line per record, by delivery day', () => {
    const stream = one('AWS::KinesisFirehose::DeliveryStream');
    expect(stream.Properties).toMatchObject({
      DeliveryStreamType: 'DirectPut',
      DeliveryStreamEncryptionConfigurationInput: {
        KeyType: 'CUSTOMER_MANAGED_CMK',
        KeyARN: getAtt(app.audit.trail.key),
      },
      ExtendedS3DestinationConfiguration: {
        BucketARN: getAtt(app.audit.trail.bucket),
        RoleARN: getAtt(app.audit.trail.deliveryRole),
        Prefix: `${AUDIT_PREFIXES.records}dt=!{timestamp:yyyy-MM-dd}/`,
        ErrorOutputPrefix: expect.stringMatching(new RegExp(`^${AUDIT_PREFIXES.failed}`)),
        CompressionFormat: 'GZIP',
        EncryptionConfiguration: { KMSEncryptionConfig: { AWSKMSKeyARN: getAtt(app.audit.trail.key) } },
        CloudWatchLoggingOptions: { Enabled: true },
        ProcessingConfiguration: {
          Enabled: true,
          Processors: [
            { Type: 'Decompression', Parameters: [{ ParameterName: 'CompressionFormat', ParameterValue: 'GZIP' }] },
            {
              Type: 'CloudWatchLogProcessing',
              Parameters: [{ ParameterName: 'DataMessageExtraction', ParameterValue: 'true' }],
            },
            { Type: 'AppendDelimiterToRecord', Parameters: [] },
          ],
        },
      },
    });
  });
});

describe('least privilege on the audit stack’s roles', () => {
  /** Every statement of the customer-managed policies attached to a role, actions sorted, as JSON. */
  const statementsOfRole = (roleId: string) =>
    ofType('AWS::IAM::ManagedPolicy')
      .filter((policy) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as any[])
      .map((statement) => ({ ...statement, Action: [statement.Action].flat().sort() }));

  it('has two roles, no inline policy and no grant on *', () => {
    expect(ofType('AWS::IAM::Role')).toHaveLength(2);
    expect(ofType('AWS::IAM::Policy')).toEqual([]);
    for (const policy of ofType('AWS::IAM::ManagedPolicy')) {
      for (const statement of policy.Properties.PolicyDocument.Statement) expect(statement.Resource).not.toBe('*');
    }
  });

  it('lets Firehose (of this account) put records under its prefixes, never read or delete, and use the key through S3 only', () => {
    const roleId = ref(app.audit.trail.deliveryRole);
    const role = resources('auditTemplate')[roleId]!;
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({
        Principal: { Service: 'firehose.amazonaws.com' },
        Condition: { StringEquals: { 'sts:ExternalId': { Ref: 'AWS::AccountId' } } },
      }),
    ]);
    const statements = statementsOfRole(roleId);
    expect(statements.map((statement) => statement.Action)).toEqual([
      ['s3:AbortMultipartUpload', 's3:PutObject'],
      ['s3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'],
      ['kms:Decrypt', 'kms:GenerateDataKey'],
      ['logs:PutLogEvents'],
    ]);
    const objects = JSON.stringify(statements[0].Resource);
    expect(objects).toContain(`/${AUDIT_PREFIXES.records}*`);
    expect(objects).toContain(`/${AUDIT_PREFIXES.failed}*`);
    expect(statements[1].Resource).toEqual(getAtt(app.audit.trail.bucket));
    expect(statements[2]).toMatchObject({
      Resource: getAtt(app.audit.trail.key),
      Condition: { StringEquals: { 'kms:ViaService': expect.anything() } },
    });
    expect(statements[3]!.Resource).toEqual(getAtt(app.audit.trail.deliveryErrors));
  });

  it('lets CloudWatch Logs (this account’s log groups) put records into the stream, and nothing else', () => {
    const roleId = ref(app.audit.trail.subscriptionRole);
    const role = resources('auditTemplate')[roleId]!;
    expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({
        Principal: { Service: 'logs.amazonaws.com' },
        Condition: { StringLike: { 'aws:SourceArn': expect.anything() } },
      }),
    ]);
    expect(statementsOfRole(roleId)).toEqual([
      {
        Effect: 'Allow',
        Action: ['firehose:PutRecord', 'firehose:PutRecordBatch'],
        Resource: getAtt(app.audit.trail.deliveryStream),
      },
    ]);
    // The filters are created once the role may put records: CloudWatch Logs tests the destination then.
    for (const filter of ofType('AWS::Logs::SubscriptionFilter')) {
      expect(filter.DependsOn).toEqual(expect.arrayContaining([roleId]));
      expect(filter.DependsOn!.length).toBeGreaterThan(1);
    }
  });

  it('gives the functions no grant and no variable for the trail: their audit records are log lines', () => {
    for (const fn of apiResources().filter((r) => r.Type === 'AWS::Lambda::Function')) {
      expect(fn.Properties.Environment?.Variables?.AUDIT_LOG_GROUP).toBeUndefined();
      // Lambda's advanced logging controls would drop INFO lines, audit records included.
      expect(fn.Properties.LoggingConfig?.ApplicationLogLevel).toBeUndefined();
    }
    expect(JSON.stringify(apiResources())).not.toContain(ref(app.audit.trail.bucket));
    for (const template of ['automationTemplate', 'eventsTemplate'] as const) {
      expect(JSON.stringify(resources(template))).not.toContain(ref(app.audit.trail.bucket));
    }
  });
});

describe('CloudTrail data events of the attachments bucket', () => {
  it('records GetObject, PutObject and DeleteObject of its objects, into the locked bucket under its own prefix, with the audit key', () => {
    const trail = one('AWS::CloudTrail::Trail');
    expect(trail.Properties).toMatchObject({
      IsLogging: true,
      S3BucketName: { Ref: ref(app.audit.trail.bucket) },
      S3KeyPrefix: AUDIT_PREFIXES.cloudTrail,
      KMSKeyId: getAtt(app.audit.trail.key),
      EnableLogFileValidation: true,
      IncludeGlobalServiceEvents: false,
    });
    expect(trail.Properties.EventSelectors).toBeUndefined();
    const [selector, ...more] = trail.Properties.AdvancedEventSelectors;
    expect(more).toEqual([]);
    expect(selector.FieldSelectors).toEqual([
      { Field: 'eventCategory', Equals: ['Data'] },
      { Field: 'resources.type', Equals: ['AWS::S3::Object'] },
      { Field: 'resources.ARN', StartsWith: [expect.anything()] },
      { Field: 'eventName', Equals: ['GetObject', 'PutObject', 'DeleteObject'] },
    ]);
    expect(OBJECT_EVENTS).toEqual(['GetObject', 'PutObject', 'DeleteObject']);
    expect(JSON.stringify(selector.FieldSelectors[2].StartsWith)).toContain(':s3:::servicereviewdata-attachments-');
    expect(trail.DependsOn).toEqual([ref(app.audit.trail.bucket.policy!)]);
  });

  it('may encrypt with the audit key only as this trail', () => {
    const key = resources('auditTemplate')[ref(app.audit.trail.key)]!;
    const byCloudTrail = (key.Properties.KeyPolicy.Statement as any[]).filter(
      (statement) => statement.Principal?.Service === 'cloudtrail.amazonaws.com',
    );
    expect(byCloudTrail.map((statement) => statement.Action)).toEqual(['kms:GenerateDataKey*', 'kms:DescribeKey']);
    for (const statement of byCloudTrail) {
      expect(JSON.stringify(statement.Condition.StringEquals['aws:SourceArn'])).toContain(':trail/');
    }
  });
});

describe('queries', () => {
  it('declares a Glue table over the records: every field, partitioned by delivery day through partition projection', () => {
    const table = ofType('AWS::Glue::Table').find((t) => t.Properties.TableInput.Name === 'records')!;
    const input = table.Properties.TableInput;
    expect(input.PartitionKeys).toEqual([expect.objectContaining({ Name: 'dt', Type: 'string' })]);
    expect(input.Parameters).toMatchObject({
      'projection.enabled': 'true',
      'projection.dt.type': 'date',
      'projection.dt.format': 'yyyy-MM-dd',
    });
    expect(JSON.stringify(input.Parameters['storage.location.template'])).toContain(
      `/${AUDIT_PREFIXES.records}dt=\${dt}/`,
    );
    const columns = (input.StorageDescriptor.Columns as { Name: string; Type: string }[]).map((c) => c.Name);
    expect(columns).toEqual([AUDIT_MARKER.field, ...AUDIT_RECORD_FIELDS.map((field) => field.toLowerCase())]);
    const resource = input.StorageDescriptor.Columns.find((c: { Name: string }) => c.Name === 'resource').Type;
    expect(resource).toContain('requestexternalid:string');
    expect(resource).toContain('requestexternalids:array<string>');
    expect(input.StorageDescriptor.SerdeInfo.SerializationLibrary).toBe('org.openx.data.jsonserde.JsonSerDe');
  });

  it('saves the queries "who touched request X" and "everything client Y did on day Z" in an encrypting workgroup', () => {
    const workGroup = one('AWS::Athena::WorkGroup');
    expect(workGroup.Properties.WorkGroupConfiguration).toMatchObject({
      EnforceWorkGroupConfiguration: true,
      ResultConfiguration: {
        EncryptionConfiguration: { EncryptionOption: 'SSE_KMS', KmsKey: getAtt(app.audit.trail.key) },
      },
    });
    const queries = ofType('AWS::Athena::NamedQuery');
    expect(queries.map((query) => query.Properties.Name)).toEqual([
      'Who touched request X',
      'Everything client Y did on day Z',
      "S3 reads, writes and deletes of request X's files",
    ]);
    for (const query of queries) {
      expect(query.Properties.WorkGroup).toBe(workGroup.Properties.Name);
      expect(query.Properties.QueryString).toContain(`"${query.Properties.Database}".`);
    }
    expect(queries[0]!.Properties.QueryString).toContain('resource.ids.requestexternalid = ?');
    expect(queries[1]!.Properties.QueryString).toMatch(/clientid = \?[\s\S]*dt BETWEEN \?/);
  });
});

describe('alarms on delivery', () => {
  const alarms = () =>
    Object.values(resources('monitoringTemplate')).filter(
      (r) => r.Type === 'AWS::CloudWatch::Alarm' && String(r.Properties.AlarmName).includes('AuditTrail'),
    );

  it('alarm on a failed S3 write and on records waiting too long, to the alarm topic like every other alarm', () => {
    const byName: Record<string, Record<string, any>> = Object.fromEntries(
      alarms().map((alarm) => [alarm.Properties.AlarmName, alarm.Properties]),
    );
    expect(Object.keys(byName).sort()).toEqual([
      'ServiceReview-prod-AuditTrail-delivery-failures',
      'ServiceReview-prod-AuditTrail-delivery-freshness',
    ]);
    const stream = { Name: 'DeliveryStreamName', Value: expect.anything() };
    expect(byName['ServiceReview-prod-AuditTrail-delivery-failures']).toMatchObject({
      Namespace: 'AWS/Firehose',
      MetricName: 'DeliveryToS3.Success',
      Dimensions: [stream],
      Statistic: 'Minimum',
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(byName['ServiceReview-prod-AuditTrail-delivery-freshness']).toMatchObject({
      Namespace: 'AWS/Firehose',
      MetricName: 'DeliveryToS3.DataFreshness',
      Dimensions: [stream],
      Statistic: 'Maximum',
      Threshold: DELIVERY_FRESHNESS_THRESHOLD_SECONDS,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const topic = { Ref: logicalIdOf(app.monitoring.monitoring.topic as never) };
    for (const alarm of Object.values(byName)) {
      expect(alarm.AlarmActions).toEqual([topic]);
      expect(alarm.OKActions).toEqual([topic]);
    }
  });
});

describe('stacks', () => {
  it('keeps the trail out of the API stack and its areas (each template’s count: stack-sizes.test.ts)', () => {
    for (const type of [
      'AWS::Logs::SubscriptionFilter',
      'AWS::KinesisFirehose::DeliveryStream',
      'AWS::CloudTrail::Trail',
    ]) {
      expect(apiResources().filter((r) => r.Type === type)).toEqual([]);
    }
  });
});
