import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceConfigOf } from '#infra/config';
import { SERVER_ERROR_RATE_THRESHOLD } from '#infra/constructs/monitoring';
import { ServiceFunction } from '#infra/constructs/service-function';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from '#lib/observability/names';
import { automationTasks, invokedFunctions, recheckTasks } from '#lib/routes/automation-tasks';
import {
  automationEventFunctions,
  eventFunctions,
  scheduledPayerFunctions,
  webhookDeliveryFunctions,
} from '#lib/routes/event-functions';
import { functionNameOf, routes } from '#lib/routes/route-table';
import { logicalIdOf, resourceNamedBy, synthesize } from './synthesized-app.ts';

/*
 * The monitoring stack and the context configuration, on the whole app with both cdk-nag packs (a
 * finding fails synthesis). Bundling is skipped (`aws:cdk:bundling-stacks`): nothing here reads a bundle.
 */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string };
const resourcesOf = (template: Template, type: string): Resource[] =>
  Object.values(template.toJSON().Resources as Record<string, Resource>).filter((r) => r.Type === type);

const functionCount =
  routes.length +
  1 +
  eventFunctions.length +
  automationTasks.length +
  automationEventFunctions.length +
  invokedFunctions.length +
  webhookDeliveryFunctions.length +
  recheckTasks.length +
  scheduledPayerFunctions.length;
/** Functions invoked asynchronously, each with a dead-letter queue (the scheduled sweep and keeper too). */
const withDeadLetters = [
  ...eventFunctions,
  ...automationEventFunctions,
  ...scheduledPayerFunctions,
  ...webhookDeliveryFunctions.filter((fn) => 'schedule' in fn.trigger),
];

describe('monitoring with the default (production) configuration', () => {
  let app: ReturnType<typeof synthesize>;
  let monitoring: Template;
  beforeAll(() => {
    app = synthesize({ context: NO_BUNDLING });
    monitoring = Template.fromStack(app.monitoring);
  }, 180_000);
  afterAll(() => app?.cleanUp());

  const alarms = () => resourcesOf(monitoring, 'AWS::CloudWatch::Alarm');
  const alarmNamed = (name: string) => alarms().find((alarm) => alarm.Properties.AlarmName === name);

  it('alarms on each route: 5xx rate and p99 latency of its EMF metrics', () => {
    for (const route of routes.map(functionNameOf)) {
      expect(alarmNamed(`ServiceReview-prod-${route}-5xx`)?.Properties, route).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: METRIC.serverErrors,
        Dimensions: expect.arrayContaining([
          { Name: 'service', Value: SERVICE_NAME },
          { Name: 'route', Value: route },
        ]),
        Statistic: 'Average',
        Threshold: SERVER_ERROR_RATE_THRESHOLD,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(alarmNamed(`ServiceReview-prod-${route}-p99`)?.Properties, route).toMatchObject({
        MetricName: METRIC.latency,
        ExtendedStatistic: 'p99',
        Threshold: 5000,
        EvaluationPeriods: 3,
      });
    }
  });

  it('alarms on throttles of every function, dead letters and state-machine failures', () => {
    const throttles = alarms().filter((alarm) => alarm.Properties.MetricName === 'Throttles');
    expect(throttles).toHaveLength(functionCount);
    // One per function, wherever it is (the routes' in the API's areas): each alarm's dimension followed to its function.
    const throttled = throttles.map((alarm) => {
      const [dimension] = alarm.Properties.Dimensions;
      expect(dimension.Name).toBe('FunctionName');
      return resourceNamedBy(app.monitoring, dimension.Value);
    });
    const functions = [app.api, app.automation, app.events].flatMap((stack) =>
      stack.node
        .findAll()
        .filter((construct): construct is ServiceFunction => construct instanceof ServiceFunction)
        .map((fn) => `${Stack.of(fn).node.path}/${logicalIdOf(fn.function)}`),
    );
    expect(functions).toHaveLength(functionCount);
    expect(throttled.sort()).toEqual(functions.sort());
    for (const eventFunction of withDeadLetters) {
      expect(alarmNamed(`ServiceReview-prod-${eventFunction.name}-dead-letters`)?.Properties).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 1,
      });
    }
    const machines = ['ViewOnPage', 'CheckAuthStatusBatch', 'SubmitToPayer', 'DueRechecks'];
    for (const machine of machines) {
      const failures = alarmNamed(`ServiceReview-prod-${machine}-failures`);
      expect(JSON.stringify(failures?.Properties.Metrics)).toContain('ExecutionsFailed');
      expect(JSON.stringify(failures?.Properties.Metrics)).toContain('ExecutionsTimedOut');
    }
    // And two on the audit trail's delivery (audit-trail.test.ts); on webhook delivery (events-stack.test.ts):
    // its two dead-letter queues, each delivery function's errors, the pipe's failures, failing and disabled subscriptions.
    const webhookDelivery = 2 + webhookDeliveryFunctions.length + 1 + 2;
    expect(alarms()).toHaveLength(
      routes.length * 2 + functionCount + withDeadLetters.length + machines.length + 2 + webhookDelivery,
    );
  });

  it('sends every alarm, and its return to OK, to an encrypted, TLS-only topic with no subscriber by default', () => {
    const [topic] = resourcesOf(monitoring, 'AWS::SNS::Topic');
    expect(topic?.Properties.KmsMasterKeyId).toBeDefined();
    const topicId = logicalIdOf(app.monitoring.monitoring.topic as never);
    for (const alarm of alarms()) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
    }
    monitoring.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      }),
    });
    monitoring.resourceCountIs('AWS::SNS::Subscription', 0);
    // CloudWatch must be able to use the topic's key, or no alarm is ever delivered.
    expect(JSON.stringify(resourcesOf(monitoring, 'AWS::KMS::Key')[0]?.Properties.KeyPolicy)).toContain(
      'cloudwatch.amazonaws.com',
    );
  });

  it('draws one dashboard with every alarm, the per-route metrics, verdicts and automation outcomes', () => {
    const dashboards = resourcesOf(monitoring, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    expect(dashboards[0]!.Properties.DashboardName).toBe('ServiceReview-prod');
    const body = JSON.stringify(dashboards[0]!.Properties.DashboardBody);
    for (const name of Object.values(METRIC)) expect(body).toContain(name);
    expect(body).toContain('alarm');
  });

  it('gives every function its Powertools settings, the default level and a year of logs', () => {
    for (const template of [...app.apiTemplates, app.automationTemplate, app.eventsTemplate]) {
      for (const fn of resourcesOf(template, 'AWS::Lambda::Function')) {
        if (!fn.Properties.Environment) continue; // CDK's own helper functions
        expect(fn.Properties.Environment.Variables).toMatchObject({
          POWERTOOLS_LOG_LEVEL: 'INFO',
        });
      }
      for (const group of resourcesOf(template, 'AWS::Logs::LogGroup')) {
        expect(group.Properties.RetentionInDays).toBeGreaterThanOrEqual(365);
      }
    }
  });

  it('retains every stateful resource of the data and audit stacks, and the log groups, when a stack is deleted', () => {
    for (const type of ['AWS::DynamoDB::Table', 'AWS::S3::Bucket', 'AWS::KMS::Key']) {
      const resources = resourcesOf(app.dataTemplate, type);
      expect(resources.length, type).toBeGreaterThan(0);
      for (const resource of resources) expect(resource.DeletionPolicy, type).toBe('Retain');
    }
    for (const type of ['AWS::S3::Bucket', 'AWS::KMS::Key']) {
      const resources = resourcesOf(app.auditTemplate, type);
      expect(resources.length, type).toBeGreaterThan(0);
      for (const resource of resources) expect(resource.DeletionPolicy, type).toBe('Retain');
    }
    for (const template of [...app.apiTemplates, app.automationTemplate, app.eventsTemplate, app.auditTemplate]) {
      for (const group of resourcesOf(template, 'AWS::Logs::LogGroup')) expect(group.DeletionPolicy).toBe('Retain');
    }
    expect(resourcesOf(app.dataTemplate, 'AWS::DynamoDB::Table')[0]!.Properties.DeletionProtectionEnabled).toBe(true);
    expect(app.data.terminationProtection).toBe(true);
    expect(app.audit.terminationProtection).toBe(true);
  });
});

describe('monitoring of a dev stack configured from context', () => {
  let app: ReturnType<typeof synthesize>;
  beforeAll(() => {
    app = synthesize({
      context: {
        ...NO_BUNDLING,
        stage: 'dev',
        logLevel: 'debug',
        logRetentionDays: 30,
        alarmEmail: 'oncall@example.com',
        latencyP99Ms: 2000,
        removalPolicy: 'destroy',
        browserConcurrency: 3,
      },
    });
  }, 180_000);
  afterAll(() => app?.cleanUp());

  it('names alarms and the dashboard after the stage, subscribes the email and uses the threshold', () => {
    const monitoring = Template.fromStack(app.monitoring);
    monitoring.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'ServiceReview-dev' });
    monitoring.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    monitoring.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'ServiceReview-dev-CreateRequest-p99',
      Threshold: 2000,
    });
  });

  it('sets the functions level and retention from context, and lets everything go with the stacks', () => {
    const apiResourcesOf = (type: string) => app.apiTemplates.flatMap((template) => resourcesOf(template, type));
    for (const fn of apiResourcesOf('AWS::Lambda::Function')) {
      if (fn.Properties.Environment) expect(fn.Properties.Environment.Variables.POWERTOOLS_LOG_LEVEL).toBe('DEBUG');
    }
    for (const group of apiResourcesOf('AWS::Logs::LogGroup').filter(
      (g) => !String(g.Properties.LogGroupName ?? '').startsWith('API-Gateway'),
    )) {
      if (group.Properties.RetentionInDays !== 30) continue; // the gateway's own logs keep their periods
      expect(group.DeletionPolicy).toBe('Delete');
    }
    expect(apiResourcesOf('AWS::Logs::LogGroup').filter((g) => g.Properties.RetentionInDays === 30)).toHaveLength(
      functionCount -
        automationTasks.length -
        automationEventFunctions.length -
        invokedFunctions.length -
        webhookDeliveryFunctions.length -
        recheckTasks.length -
        scheduledPayerFunctions.length,
    );
    const [table] = resourcesOf(app.dataTemplate, 'AWS::DynamoDB::Table');
    expect(table?.DeletionPolicy).toBe('Delete');
    expect(table?.Properties.DeletionProtectionEnabled).toBe(false);
    expect(app.data.terminationProtection).toBe(false);
    // Except the audit trail's buckets and key: its records are locked for six years, and need the key.
    expect(app.audit.terminationProtection).toBe(false);
    for (const type of ['AWS::S3::Bucket', 'AWS::KMS::Key']) {
      for (const resource of resourcesOf(app.auditTemplate, type)) expect(resource.DeletionPolicy, type).toBe('Retain');
    }
    expect(resourcesOf(app.auditTemplate, 'AWS::Logs::LogGroup')[0]?.DeletionPolicy).toBe('Delete');
  });

  it("reserves the browser workers' concurrency from context", () => {
    const reserved = Object.values(app.automationTemplate.findResources('AWS::Lambda::Function'))
      .map((fn) => fn.Properties.ReservedConcurrentExecutions)
      .filter((value) => value !== undefined);
    expect(reserved).toEqual(automationTasks.filter((task) => task.worker === 'browser').map(() => 3));
  });
});

describe('context configuration', () => {
  const configOf = (context: Record<string, unknown>) => serviceConfigOf(new App({ context }));

  it('defaults to production-safe settings', () => {
    expect(configOf({})).toMatchObject({
      stage: 'prod',
      logLevel: 'INFO',
      logRetention: 365,
      removalPolicy: 'retain',
      browserConcurrency: 10,
    });
    expect(configOf({ browserConcurrency: '4' }).browserConcurrency).toBe(4);
  });

  it('refuses removalPolicy=destroy for production, and values that make no sense', () => {
    expect(() => configOf({ removalPolicy: 'destroy' })).toThrow(/refused for stage prod/);
    expect(() => configOf({ stage: 'production', removalPolicy: 'destroy' })).toThrow(/refused/);
    expect(() => configOf({ logLevel: 'loud' })).toThrow(/logLevel/);
    expect(() => configOf({ logRetentionDays: 42 })).toThrow(/logRetentionDays/);
    expect(() => configOf({ alarmTopicArn: 'my-topic' })).toThrow(/alarmTopicArn/);
    expect(() => configOf({ stage: 'Prod Stage' })).toThrow(/stage/);
    expect(() => configOf({ latencyP99Ms: -1 })).toThrow(/latencyP99Ms/);
    for (const browserConcurrency of [0, 2.5, 'many', 1001]) {
      expect(() => configOf({ browserConcurrency })).toThrow(/browserConcurrency/);
    }
  });

  it('sends alarms to an existing topic when given one, creating none', () => {
    const arn = 'arn:aws:sns:us-east-1:123456789012:on-call';
    const app = synthesize({ context: { ...NO_BUNDLING, alarmTopicArn: arn } });
    try {
      const monitoring = Template.fromStack(app.monitoring);
      monitoring.resourceCountIs('AWS::SNS::Topic', 0);
      monitoring.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmActions: [arn] });
    } finally {
      app.cleanUp();
    }
  }, 180_000);
});
