import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { CfnManagedPolicy } from 'aws-cdk-lib/aws-iam';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PIPE_MAX_RECORD_AGE } from '#infra/constructs/outbox-pipe';
import { MAX_RECEIVE_COUNT, VISIBILITY_TIMEOUT_FACTOR } from '#infra/constructs/service-events-queue';
import { QUEUE_CONSUMER_TIMEOUT } from '#infra/events-stack';
import { EVENT_TYPES } from '#lib/entities/service-event';
import { EVENT_BUS_NAME, EVENT_SOURCE, outboxStreamFilter, pipeTarget } from '#lib/events/bus-event';
import { METRIC, METRICS_NAMESPACE } from '#lib/observability/names';
import { webhookDeliveryFunctions } from '#lib/routes/event-functions';
import { routes } from '#lib/routes/route-table';
import { PURPOSE } from '#lib/webhooks/signing-secrets';
import {
  actionsOf,
  expectedActions,
  expectedGrants,
  grantsOf,
  logicalIdOf,
  resourceIdsOf,
  statementsOf,
  synthesize,
} from './synthesized-app.ts';

/*
 * The events stack (infra/events-stack.ts, docs/events.md and docs/webhooks.md "On AWS"): the table's
 * stream, the pipe and its template, the encrypted bus, the rule, queue and dead-letter queue, the
 * delivery functions with exactly their access, their triggers, and the alarms. On the whole app with
 * both cdk-nag packs (a finding fails synthesis); bundling is skipped: nothing here reads a bundle.
 */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
let app: ReturnType<typeof synthesize>;
beforeAll(() => {
  app = synthesize({ context: NO_BUNDLING });
}, 180_000);
afterAll(() => app?.cleanUp());

const resources = (template: 'eventsTemplate' | 'dataTemplate' | 'apiTemplate' | 'monitoringTemplate') =>
  app[template].toJSON().Resources as Record<string, Resource>;
const ofType = (type: string, template: Parameters<typeof resources>[0] = 'eventsTemplate') =>
  Object.values(resources(template)).filter((resource) => resource.Type === type);
const one = (type: string) => {
  const found = ofType(type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};
const byId = (construct: { node: { defaultChild?: unknown } }) => resources('eventsTemplate')[logicalIdOf(construct)]!;
const getAtt = (construct: { node: { defaultChild?: unknown } }) => ({ 'Fn::GetAtt': [logicalIdOf(construct), 'Arn'] });
/** A value the events stack reads from the data stack's outputs (a cross-stack reference). */
const fromData = (resource: unknown) => {
  const text = JSON.stringify(resource);
  expect(text).toContain('"StackName":"ServiceReviewData"');
  return text;
};
const policyStatements = (policy: unknown) =>
  resources('eventsTemplate')[
    Stack.of(app.events).getLogicalId((policy as { node: { defaultChild: CfnManagedPolicy } }).node.defaultChild)
  ]!.Properties.PolicyDocument.Statement as Array<Record<string, any>>;

describe('synthesis', () => {
  it('passes the AwsSolutions and HIPAA Security packs, the events stack included', () => {
    const report = JSON.parse(readFileSync(join(app.app.outdir, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports).toEqual([]);
    expect(app.events.stackName).toBe('ServiceReviewEvents');
  });

  it('keeps all of it out of the API stack, whose resource count does not move', () => {
    // The API stack's own template and its areas' (the routes' functions), less the areas' nested stack resources.
    const api = app.apiTemplates
      .flatMap((template) => Object.values(template.toJSON().Resources as Record<string, Resource>))
      .filter((resource) => resource.Type !== 'AWS::CloudFormation::Stack');
    for (const type of ['AWS::Pipes::Pipe', 'AWS::Events::EventBus', 'AWS::Lambda::EventSourceMapping']) {
      expect(
        api.filter((resource) => resource.Type === type),
        type,
      ).toEqual([]);
    }
    // Measured before this stack existed: 390 (docs/infrastructure.md), in one template then, with 43 routes;
    // each route added since brings its 8 (function, role, two policies, log group, method, permission, path),
    // and one more for a new path segment of its own (`Payers/notifications` above `{subscriptionId}`).
    const newPathSegments = 1;
    expect(api.length).toBe(390 + 8 * (routes.length - 43) + newPathSegments);
    expect(Object.keys(resources('eventsTemplate')).length).toBeLessThan(100);
  });
});

describe('the outbox pipe', () => {
  it('reads the table stream, new images', () => {
    const [table] = ofType('AWS::DynamoDB::Table', 'dataTemplate');
    expect(table!.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  });

  it('passes inserts of outbox items only, onto the service-review bus, the event as detail and its type as detail-type', () => {
    const pipe = one('AWS::Pipes::Pipe').Properties;
    expect(fromData(pipe.Source)).toMatch(/StreamArn/);
    expect(pipe.SourceParameters.FilterCriteria).toEqual({
      Filters: [{ Pattern: '{"eventName":["INSERT"],"dynamodb":{"Keys":{"sk":{"S":["OUTBOX"]}}}}' }],
    });
    expect(JSON.parse(pipe.SourceParameters.FilterCriteria.Filters[0].Pattern)).toEqual(outboxStreamFilter);
    expect(pipe.Target).toEqual(getAtt(app.events.bus));
    expect(pipe.TargetParameters).toEqual({
      InputTemplate: '<$.dynamodb.NewImage.event.M>',
      EventBridgeEventBusParameters: {
        Source: EVENT_SOURCE,
        DetailType: '$.dynamodb.NewImage.type.S',
        Time: '$.dynamodb.NewImage.occurredAt.S',
      },
    });
    expect(pipe.TargetParameters.InputTemplate).toBe(pipeTarget.inputTemplate);
    expect(pipe.Name).toBe('ServiceReviewEvents-outbox');
  });

  it('retries in order from the trim horizon, bisects a failing batch, then dead-letters what is 6 hours old; logs errors without data', () => {
    const pipe = one('AWS::Pipes::Pipe').Properties;
    expect(pipe.SourceParameters.DynamoDBStreamParameters).toEqual({
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 10,
      MaximumRecordAgeInSeconds: 21_600,
      MaximumRetryAttempts: -1,
      OnPartialBatchItemFailure: 'AUTOMATIC_BISECT',
      DeadLetterConfig: { Arn: getAtt(app.events.pipe.deadLetterQueue) },
    });
    expect(PIPE_MAX_RECORD_AGE.toSeconds()).toBe(21_600);
    expect(pipe.LogConfiguration).toEqual({
      Level: 'ERROR',
      CloudwatchLogsLogDestination: { LogGroupArn: getAtt(app.events.pipe.logGroup) },
    });
    const logs = byId(app.events.pipe.logGroup).Properties;
    expect(fromData(logs.KmsKeyId)).toMatch(/DataKey/);
    expect(logs.RetentionInDays).toBe(365);
    const deadLetters = byId(app.events.pipe.deadLetterQueue).Properties;
    expect(deadLetters).toMatchObject({ KmsMasterKeyId: getAtt(app.events.key), MessageRetentionPeriod: 1_209_600 });
  });

  it('runs with a role of its own that this account alone may pass: that stream, that bus, that queue, those logs', () => {
    const role = byId(app.events.pipe.role).Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      {
        Action: 'sts:AssumeRole',
        Effect: 'Allow',
        Principal: { Service: 'pipes.amazonaws.com' },
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      },
    ]);
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.Policies).toBeUndefined();
    const grants = (statements: Array<Record<string, any>>) =>
      statements.map(({ Action, Resource, Condition }) => ({
        actions: [Action].flat().sort(),
        resource: JSON.stringify(Resource),
        condition: JSON.stringify(Condition ?? null),
      }));
    const scoped = grants(policyStatements(app.events.pipe.role.policy));
    const key = (construct: { node: { defaultChild?: unknown } }) => logicalIdOf(construct);
    expect(scoped.map(({ actions }) => actions)).toEqual([
      ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
      ['kms:Decrypt'],
      ['events:PutEvents'],
      ['sqs:SendMessage'],
      ['kms:Decrypt', 'kms:GenerateDataKey'],
      ['logs:CreateLogStream', 'logs:PutLogEvents'],
    ]);
    expect(scoped[0]!.resource).toMatch(/ServiceReviewData.*StreamArn/);
    expect(scoped[1]!.resource).toMatch(/ServiceReviewData.*DataKey/);
    expect(scoped[1]!.condition).toMatch(/kms:ViaService.*dynamodb\./);
    expect(scoped[2]!.resource).toBe(JSON.stringify(getAtt(app.events.bus)));
    expect(scoped[3]!.resource).toBe(JSON.stringify(getAtt(app.events.pipe.deadLetterQueue)));
    expect(scoped[4]!.resource).toContain(key(app.events.key));
    expect(scoped[4]!.condition).toMatch(/kms:ViaService.*sqs\./);
    expect(scoped[5]!.resource).toBe(JSON.stringify(getAtt(app.events.pipe.logGroup)));
    // ListStreams alone on *, in the policy cdk-nag lets * pass in.
    expect(policyStatements(app.events.pipe.role.unscopedPolicy!)).toEqual([
      { Action: 'dynamodb:ListStreams', Effect: 'Allow', Resource: '*' },
    ]);
    // Created after its policies: the pipe checks its role when it is made.
    expect(one('AWS::Pipes::Pipe').DependsOn).toEqual(
      expect.arrayContaining(app.events.pipe.role.policies.map((policy) => logicalIdOf(policy))),
    );
  });
});

describe('the bus, the rule and the queues', () => {
  it('names the bus service-review and encrypts it with a rotated key EventBridge may use for that bus only', () => {
    const bus = one('AWS::Events::EventBus').Properties;
    expect(bus).toMatchObject({
      Name: EVENT_BUS_NAME,
      KmsKeyIdentifier: getAtt(app.events.key),
      DeadLetterConfig: { Arn: getAtt(app.events.deadLetterQueue) },
    });
    const key = byId(app.events.key).Properties;
    expect(key.EnableKeyRotation).toBe(true);
    const forBus = (key.KeyPolicy.Statement as Array<Record<string, any>>).find((statement) =>
      JSON.stringify(statement.Condition ?? {}).includes('kms:EncryptionContext:aws:events:event-bus:arn'),
    );
    expect(forBus).toMatchObject({ Principal: { Service: 'events.amazonaws.com' }, Effect: 'Allow' });
    expect(JSON.stringify(forBus!.Condition)).toContain(':event-bus/service-review');
  });

  it('routes every event type of the pipe to the delivery queue, and what it cannot deliver to the dead-letter queue', () => {
    const rule = byId(app.events.deliveries.rule).Properties;
    expect(rule.EventBusName).toEqual({ Ref: logicalIdOf(app.events.bus) });
    expect(rule.EventPattern).toEqual({ source: [EVENT_SOURCE], 'detail-type': [...EVENT_TYPES] });
    expect(rule.Targets).toEqual([
      {
        Id: 'Target0',
        Arn: getAtt(app.events.deliveries.queue),
        DeadLetterConfig: { Arn: getAtt(app.events.deadLetterQueue) },
      },
    ]);
  });

  it('encrypts both queues with the events key, refuses plain HTTP, and dead-letters a message after five receives', () => {
    const queue = byId(app.events.deliveries.queue).Properties;
    expect(MAX_RECEIVE_COUNT).toBe(5);
    expect(queue).toMatchObject({
      KmsMasterKeyId: getAtt(app.events.key),
      VisibilityTimeout: QUEUE_CONSUMER_TIMEOUT.toSeconds() * VISIBILITY_TIMEOUT_FACTOR,
      MessageRetentionPeriod: 4 * 24 * 3600,
      RedrivePolicy: { deadLetterTargetArn: getAtt(app.events.deadLetterQueue), maxReceiveCount: 5 },
    });
    expect(queue.VisibilityTimeout).toBe(540);
    expect(byId(app.events.deadLetterQueue).Properties).toMatchObject({
      KmsMasterKeyId: getAtt(app.events.key),
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    const policies = ofType('AWS::SQS::QueuePolicy');
    for (const queueConstruct of [
      app.events.deliveries.queue,
      app.events.deadLetterQueue,
      app.events.pipe.deadLetterQueue,
    ]) {
      const policy = policies.find((candidate) =>
        JSON.stringify(candidate.Properties.Queues).includes(logicalIdOf(queueConstruct)),
      );
      expect(policy?.Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
    // EventBridge may send to the dead-letter queue for that bus and that rule only.
    const dlqPolicy = policies.find((candidate) =>
      JSON.stringify(candidate.Properties.Queues).includes(logicalIdOf(app.events.deadLetterQueue)),
    )!;
    const senders = (dlqPolicy.Properties.PolicyDocument.Statement as Array<Record<string, any>>)
      .filter((statement) => statement.Effect === 'Allow')
      .map((statement) => statement.Condition.ArnEquals['aws:SourceArn']);
    expect(senders).toEqual([getAtt(app.events.bus), getAtt(app.events.deliveries.rule)]);
  });
});

describe('the delivery functions', () => {
  const fnOf = (name: string) => app.events.functions[name]!;
  const properties = (name: string) => byId(fnOf(name).function).Properties;

  it('has one function per row of webhookDeliveryFunctions, each with exactly its access, and its queue or DLQ', () => {
    expect(Object.keys(app.events.functions).sort()).toEqual(['DeliverDueWebhooks', 'DeliverWebhookEvents']);
    for (const row of webhookDeliveryFunctions) {
      const invocation = 'serviceEvents' in row.trigger ? 'queue' : 'event';
      const statements = statementsOf(fnOf(row.name));
      expect({ name: row.name, grants: grantsOf(statements, resourceIdsOf(app)) }).toEqual({
        name: row.name,
        grants: expectedGrants(row.access, invocation),
      });
      expect(actionsOf(statements)).toEqual(expectedActions(row.access, invocation));
    }
    expect(grantsOf(statementsOf(fnOf('DeliverWebhookEvents')), resourceIdsOf(app))).toEqual(
      expect.arrayContaining([
        'dynamodb:Query on table if dynamodb:LeadingKeys CLIENT#*',
        'sqs:ReceiveMessage on deliveryQueue',
        'kms:Decrypt on eventsKey',
      ]),
    );
    expect(grantsOf(statementsOf(fnOf('DeliverDueWebhooks')), resourceIdsOf(app))).toEqual(
      expect.arrayContaining(['dynamodb:Query on index gsi1', 'sqs:SendMessage on deadLetterQueue']),
    );
  });

  it('opens signing secrets with kms:Decrypt only for the purpose they are sealed with, and a client', () => {
    for (const name of ['DeliverWebhookEvents', 'DeliverDueWebhooks']) {
      const onSecretsKey = statementsOf(fnOf(name)).filter((statement) =>
        statement.resources.includes(logicalIdOf(app.data.keys.secrets)),
      );
      expect(onSecretsKey).toEqual([
        {
          actions: ['kms:Decrypt'],
          resources: expect.any(String),
          condition: {
            StringEquals: { 'kms:EncryptionContext:purpose': 'webhook-signing-secret' },
            'ForAnyValue:StringEquals': { 'kms:EncryptionContextKeys': ['clientId'] },
          },
        },
      ]);
      expect(PURPOSE).toBe('webhook-signing-secret');
      expect(properties(name).Environment.Variables.SECRETS_KEY_ID).toBeDefined();
    }
  });

  it("are named readers in the secrets key's policy: fixed role names the deny exempts", () => {
    const [key] = ofType('AWS::KMS::Key', 'dataTemplate').filter((resource) =>
      String(resource.Properties.Description).includes('webhook signing secrets'),
    );
    const deny = (key!.Properties.KeyPolicy.Statement as Array<Record<string, any>>).find(
      (statement) => statement.Sid === 'DecryptOnlyByNamedReaders',
    )!;
    const exempt = JSON.stringify(deny.Condition.ArnNotEquals['aws:PrincipalArn']);
    for (const name of ['DeliverWebhookEvents', 'DeliverDueWebhooks']) {
      const roleName = byId(fnOf(name).role).Properties.RoleName;
      expect(roleName).toBe(`ServiceReviewEvents-${name}`);
      expect(exempt).toContain(`:role/${roleName}"`);
    }
  });

  it('run outside any VPC, with the public-https URL policy (unset), Powertools, and their timeouts', () => {
    for (const name of ['DeliverWebhookEvents', 'DeliverDueWebhooks']) {
      const fn = properties(name);
      expect(fn.VpcConfig, name).toBeUndefined();
      expect(Object.keys(fn.Environment.Variables).sort(), name).toEqual([
        'POWERTOOLS_LOG_LEVEL',
        'SECRETS_KEY_ID',
        'TABLE_NAME',
      ]);
      expect(fn).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } });
    }
    expect(properties('DeliverWebhookEvents').Timeout).toBe(90);
    expect(properties('DeliverDueWebhooks').Timeout).toBe(300);
  });

  it('consumes the queue in batches of 10, at most 10 at once, reporting failed messages alone', () => {
    expect(one('AWS::Lambda::EventSourceMapping').Properties).toMatchObject({
      EventSourceArn: getAtt(app.events.deliveries.queue),
      FunctionName: { Ref: logicalIdOf(fnOf('DeliverWebhookEvents').function) },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
  });

  it('sweeps every minute: a schedule rule on the default bus, no retry of a missed one, failures to its DLQ', () => {
    const schedules = ofType('AWS::Events::Rule').filter((rule) => rule.Properties.ScheduleExpression);
    expect(schedules).toHaveLength(1);
    expect(schedules[0]!.Properties).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      Targets: [
        {
          Arn: getAtt(fnOf('DeliverDueWebhooks').function),
          DeadLetterConfig: { Arn: getAtt(fnOf('DeliverDueWebhooks').deadLetterQueue!) },
          RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 0 },
        },
      ],
    });
    expect(schedules[0]!.Properties.EventBusName).toBeUndefined();
    expect(one('AWS::Lambda::EventInvokeConfig').Properties).toMatchObject({ MaximumEventAgeInSeconds: 300 });
  });
});

describe('alarms', () => {
  const alarms = () => ofType('AWS::CloudWatch::Alarm', 'monitoringTemplate');
  const alarmNamed = (name: string) => alarms().find((alarm) => alarm.Properties.AlarmName === name)?.Properties;
  const topic = () => ({ Ref: logicalIdOf(app.monitoring.monitoring.topic as never) });

  it('alarm on a message in either dead-letter queue, on delivery function errors and on the pipe failing, to the topic', () => {
    for (const name of ['WebhookEvents', 'OutboxPipe', 'DeliverDueWebhooks']) {
      expect(alarmNamed(`ServiceReview-prod-${name}-dead-letters`), name).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 1,
      });
    }
    for (const name of ['DeliverWebhookEvents', 'DeliverDueWebhooks']) {
      expect(alarmNamed(`ServiceReview-prod-${name}-errors`), name).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Statistic: 'Sum',
        Threshold: 1,
      });
    }
    const pipe = alarmNamed('ServiceReview-prod-OutboxPipe-failures')!;
    const metrics = (pipe.Metrics as Array<Record<string, any>>).filter((metric) => metric.MetricStat);
    expect(metrics.map((metric) => metric.MetricStat.Metric)).toEqual([
      {
        Namespace: 'AWS/EventBridge/Pipes',
        MetricName: 'ExecutionFailed',
        Dimensions: [{ Name: 'PipeName', Value: 'ServiceReviewEvents-outbox' }],
      },
      {
        Namespace: 'AWS/EventBridge/Pipes',
        MetricName: 'ExecutionTimeout',
        Dimensions: [{ Name: 'PipeName', Value: 'ServiceReviewEvents-outbox' }],
      },
    ]);
    for (const name of [
      'WebhookEvents-dead-letters',
      'OutboxPipe-dead-letters',
      'DeliverWebhookEvents-errors',
      'OutboxPipe-failures',
    ]) {
      expect(alarmNamed(`ServiceReview-prod-${name}`)?.AlarmActions, name).toEqual([topic()]);
    }
  });

  it("names the replay runbook in the pipe's dead-letter alarm: a heading of docs/events.md and the admin command", () => {
    const description = alarmNamed('ServiceReview-prod-OutboxPipe-dead-letters')?.AlarmDescription as string;
    const [, file, anchor] = /Runbook: (docs\/[\w-]+\.md)#([\w-]+)/.exec(description) ?? [];
    expect(file).toBe('docs/events.md');
    // GitHub's anchor of a heading: lower case, spaces as dashes.
    const headings = readFileSync(join(process.cwd(), file!), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('#'))
      .map((line) =>
        line
          .replace(/^#+\s*/, '')
          .toLowerCase()
          .replace(/\s+/g, '-'),
      );
    expect(headings).toContain(anchor);
    expect(description).toContain('npm run -s admin -- replay-events --since');
    expect(description.length).toBeLessThanOrEqual(1024);
  });

  it('alarm when a subscription is marked failing or disabled (the metric the delivery code emits)', () => {
    for (const status of ['failing', 'disabled']) {
      expect(alarmNamed(`ServiceReview-prod-webhook-${status}`), status).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: METRIC.webhookStatusChanges,
        Dimensions: expect.arrayContaining([{ Name: 'status', Value: status }]),
        Statistic: 'Sum',
        Threshold: 1,
        AlarmActions: [topic()],
        OKActions: [topic()],
      });
    }
  });
});
