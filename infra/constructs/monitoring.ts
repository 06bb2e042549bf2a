import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IDeliveryStream } from 'aws-cdk-lib/aws-kinesisfirehose';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { ServiceConfig } from '#infra/config';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from '#lib/observability/names';
import type { ServiceFunction } from './service-function.ts';

export interface MonitoringProps {
  config: ServiceConfig;
  /** The routes' names (lib/routes/route-table.ts functionNameOf): the `route` dimension of the request metrics. */
  routeNames: readonly string[];
  /** Every function of the service: an alarm on its throttles. */
  functions: ReadonlyArray<{ name: string; fn: ServiceFunction }>;
  /** Dead-letter queues: an alarm as soon as one holds a message; its description names the runbook, if any. */
  deadLetterQueues: ReadonlyArray<{ name: string; queue: IQueue; runbook?: string }>;
  stateMachines: ReadonlyArray<{ name: string; stateMachine: IStateMachine }>;
  /** Firehose streams to S3 (the audit trail's): an alarm when delivery fails or falls behind. */
  deliveryStreams?: ReadonlyArray<{ name: string; stream: IDeliveryStream }>;
  /** Webhook delivery on AWS (the events stack): its functions' errors, the outbox pipe's failures, subscriptions' health. */
  webhookDelivery?: WebhookDeliveryMonitoring;
}

interface WebhookDeliveryMonitoring {
  /** An alarm on any error (a thrown invocation or a timeout; a message reported failed is not one). */
  functions: ReadonlyArray<{ name: string; fn: ServiceFunction }>;
  /** The outbox pipe (its name: the `PipeName` dimension of EventBridge Pipes' metrics). */
  pipeName: string;
  /** The delivery queue, whose depth the dashboard draws. */
  queue: IQueue;
}

/** EventBridge Pipes' metrics (docs: "Monitoring Amazon EventBridge Pipes"). */
const PIPES_NAMESPACE = 'AWS/EventBridge/Pipes';

const PERIOD = Duration.minutes(5);
/** 5xx answers over all answers of a route, in a 5-minute period. */
export const SERVER_ERROR_RATE_THRESHOLD = 0.05;
/**
 * The age of the oldest record a delivery stream still holds: three of its 5-minute buffers. Past it,
 * S3 refuses the writes (Firehose retries them for 24 hours, then drops them).
 */
export const DELIVERY_FRESHNESS_THRESHOLD_SECONDS = 900;

/**
 * Alarms to one SNS topic and one dashboard (docs/observability.md): per route, its 5xx rate and
 * its p99 latency (the EMF metrics of lib/observability/metrics.ts); per function, throttles; per
 * dead-letter queue, any message; per state machine, failed or timed-out executions; per delivery
 * stream (the audit trail's), a failed S3 write or records held too long. Missing data is not
 * breaching: a quiet route is not an incident. Each group is a function of its own below; they add
 * their alarms to this construct itself, so the alarms' ids (and logical ids) are those of one scope.
 */
export class Monitoring extends Construct {
  readonly topic: ITopic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { config } = props;
    this.topic = config.alarmTopicArn
      ? Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn)
      : ownAlarmTopic(this, config);
    const alarms: Alarms = { scope: this, stage: config.stage, action: new SnsAction(this.topic), alarms: this.alarms };
    addRouteAlarms(alarms, props.routeNames, config.latencyP99Ms);
    addFunctionAlarms(alarms, props.functions);
    addDeadLetterAlarms(alarms, props.deadLetterQueues);
    addStateMachineAlarms(alarms, props.stateMachines);
    addDeliveryStreamAlarms(alarms, props.deliveryStreams ?? []);
    if (props.webhookDelivery) addWebhookDeliveryAlarms(alarms, props.webhookDelivery);
    this.dashboard = addDashboard(this, props, alarmNameOf(config.stage), this.alarms);
  }
}

/** KMS-encrypted (a key CloudWatch may use: the AWS managed SNS key does not let it publish), TLS only. */
function ownAlarmTopic(scope: Construct, config: ServiceConfig): Topic {
  const key = new Key(scope, 'AlarmTopicKey', {
    description: 'Encrypts the alarm topic (alarm names and states only)',
    enableKeyRotation: true,
  });
  key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
  const topic = new Topic(scope, 'AlarmTopic', {
    displayName: `Service review ${config.stage} alarms`,
    masterKey: key,
    enforceSSL: true,
  });
  if (config.alarmEmail) topic.addSubscription(new EmailSubscription(config.alarmEmail));
  return topic;
}

/** Where the alarms go (the Monitoring construct), the stage that names them, whom they tell, and the list of them. */
interface Alarms {
  scope: Construct;
  stage: string;
  action: SnsAction;
  alarms: Alarm[];
}

interface AlarmSpec {
  id: string;
  /** After `ServiceReview-<stage>-`, joined by `-`. */
  name: string[];
  metric: IMetric;
  threshold: number;
  description: string;
  periods?: number;
  comparisonOperator?: ComparisonOperator;
}

const alarmNameOf = (stage: string, ...parts: string[]) => ['ServiceReview', stage, ...parts].join('-');

/** One alarm, to the topic when it fires and when it returns to OK. */
function addAlarm(target: Alarms, spec: AlarmSpec): Alarm {
  const alarm = new Alarm(target.scope, spec.id, {
    alarmName: alarmNameOf(target.stage, ...spec.name),
    alarmDescription: spec.description,
    metric: spec.metric,
    threshold: spec.threshold,
    comparisonOperator: spec.comparisonOperator ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: spec.periods ?? 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  alarm.addAlarmAction(target.action);
  alarm.addOkAction(target.action);
  target.alarms.push(alarm);
  return alarm;
}

/** Per route: its 5xx rate over one period and its p99 latency over three. */
function addRouteAlarms(target: Alarms, routeNames: readonly string[], latencyP99Ms: number) {
  for (const route of routeNames) {
    addAlarm(target, {
      id: `${route}ServerErrors`,
      name: [route, '5xx'],
      metric: requestMetric(METRIC.serverErrors, route, 'Average'),
      threshold: SERVER_ERROR_RATE_THRESHOLD,
      description: `${route}: 5xx answers are ${SERVER_ERROR_RATE_THRESHOLD * 100}% or more of its calls in 5 minutes.`,
    });
    addAlarm(target, {
      id: `${route}LatencyP99`,
      name: [route, 'p99'],
      metric: requestMetric(METRIC.latency, route, 'p99'),
      threshold: latencyP99Ms,
      description: `${route}: p99 latency at or above ${latencyP99Ms} ms for 15 minutes.`,
      periods: 3,
    });
  }
}

function addFunctionAlarms(target: Alarms, functions: MonitoringProps['functions']) {
  for (const { name, fn } of functions) {
    addAlarm(target, {
      id: `${name}Throttles`,
      name: [name, 'throttles'],
      metric: fn.function.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      description: `${name}: Lambda throttled an invocation (account or reserved concurrency exhausted).`,
    });
  }
}

function addDeadLetterAlarms(target: Alarms, queues: MonitoringProps['deadLetterQueues']) {
  for (const { name, queue, runbook } of queues) {
    addAlarm(target, {
      id: `${name}DeadLetters`,
      name: [name, 'dead-letters'],
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      threshold: 1,
      description: `${name}: an event failed every attempt and waits in the dead-letter queue.${runbook ? ` Runbook: ${runbook}` : ''}`,
    });
  }
}

function addStateMachineAlarms(target: Alarms, stateMachines: MonitoringProps['stateMachines']) {
  for (const { name, stateMachine } of stateMachines) {
    addAlarm(target, {
      id: `${name}Failures`,
      name: [name, 'failures'],
      metric: new MathExpression({
        expression: 'failed + timedOut',
        usingMetrics: {
          failed: stateMachine.metricFailed({ period: PERIOD, statistic: 'Sum' }),
          timedOut: stateMachine.metricTimedOut({ period: PERIOD, statistic: 'Sum' }),
        },
        period: PERIOD,
        label: `${name} failed or timed out`,
      }),
      threshold: 1,
      description: `${name}: an execution failed or timed out.`,
    });
  }
}

/** Per delivery stream: a failed write to S3, and records waiting too long for one. */
function addDeliveryStreamAlarms(target: Alarms, streams: NonNullable<MonitoringProps['deliveryStreams']>) {
  for (const { name, stream } of streams) {
    addAlarm(target, {
      id: `${name}DeliveryFailures`,
      name: [name, 'delivery-failures'],
      metric: stream.metric('DeliveryToS3.Success', { period: PERIOD, statistic: 'Minimum' }),
      threshold: 1,
      description: `${name}: a write to S3 failed (Firehose retries for 24 hours, then drops the records).`,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
    });
    addAlarm(target, {
      id: `${name}DeliveryFreshness`,
      name: [name, 'delivery-freshness'],
      metric: stream.metric('DeliveryToS3.DataFreshness', { period: PERIOD, statistic: 'Maximum' }),
      threshold: DELIVERY_FRESHNESS_THRESHOLD_SECONDS,
      description: `${name}: the oldest record waiting for S3 is ${DELIVERY_FRESHNESS_THRESHOLD_SECONDS / 60} minutes old or more.`,
    });
  }
}

/**
 * The delivery functions' errors; the outbox pipe's failed or timed-out executions (it retries them,
 * but every one holds back its shard's events); and a subscription marked failing (a delivery used up
 * its day of retries) or disabled (failing for three days): the WebhookStatusChanges metric of
 * lib/webhooks/delivery.ts, whose log line names the subscription. Their dead-letter queues are in
 * `deadLetterQueues`.
 */
function addWebhookDeliveryAlarms(target: Alarms, { functions, pipeName }: WebhookDeliveryMonitoring) {
  for (const { name, fn } of functions) {
    addAlarm(target, {
      id: `${name}Errors`,
      name: [name, 'errors'],
      metric: fn.function.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      description: `${name}: an invocation failed or timed out.`,
    });
  }
  addAlarm(target, {
    id: 'OutboxPipeFailures',
    name: ['OutboxPipe', 'failures'],
    metric: new MathExpression({
      expression: 'failed + timedOut',
      usingMetrics: {
        failed: pipeMetric(pipeName, 'ExecutionFailed'),
        timedOut: pipeMetric(pipeName, 'ExecutionTimeout'),
      },
      period: PERIOD,
      label: 'Outbox pipe executions failed or timed out',
    }),
    threshold: 1,
    description: 'OutboxPipe: putting outbox events on the bus failed (retried; the shard waits, events arrive late).',
  });
  for (const status of ['failing', 'disabled'] as const) {
    addAlarm(target, {
      id: `Webhook${status === 'failing' ? 'Failing' : 'Disabled'}`,
      name: ['webhook', status],
      metric: webhookStatusMetric(status),
      threshold: 1,
      description:
        status === 'failing'
          ? 'A webhook subscription is failing: a delivery used up its retries (log "Webhook subscription status changed").'
          : 'A webhook subscription was disabled after three days of failures (log "Webhook subscription status changed").',
    });
  }
}

/** The dashboard: every alarm's state, then the request metrics per route, then each group's graphs. */
function addDashboard(scope: Construct, props: MonitoringProps, name: string, alarms: Alarm[]): Dashboard {
  const perRoute = (metric: string, statistic: string) =>
    props.routeNames.map((route) => requestMetric(metric, route, statistic, route));
  const dashboard = new Dashboard(scope, 'Dashboard', { dashboardName: name, defaultInterval: Duration.hours(3) });
  dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
  dashboard.addWidgets(
    graph('Requests per route', perRoute(METRIC.requests, 'Sum')),
    graph('p99 latency per route (ms)', perRoute(METRIC.latency, 'p99')),
  );
  dashboard.addWidgets(
    graph('5xx per route', perRoute(METRIC.serverErrors, 'Sum')),
    graph('4xx per route', perRoute(METRIC.clientErrors, 'Sum')),
  );
  dashboard.addWidgets(
    graph('Attachment verdicts', [searchSum('verdict', METRIC.attachmentVerdicts)]),
    graph('Automation runs by kind and outcome', [searchSum('kind,outcome', METRIC.automationRuns)]),
  );
  dashboard.addWidgets(
    graph(
      'Lambda throttles',
      props.functions.map(({ name, fn }) =>
        fn.function.metricThrottles({ period: PERIOD, statistic: 'Sum', label: name }),
      ),
    ),
    graph('Dead letters and automation failures', [
      ...props.deadLetterQueues.map(({ name, queue }) =>
        queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: name }),
      ),
      ...props.stateMachines.map(({ name, stateMachine }) =>
        stateMachine.metricFailed({ period: PERIOD, statistic: 'Sum', label: `${name} failed` }),
      ),
    ]),
  );
  if (props.webhookDelivery) dashboard.addWidgets(...webhookDeliveryGraphs(props.webhookDelivery.queue));
  if (props.deliveryStreams?.length) dashboard.addWidgets(...deliveryStreamGraphs(props.deliveryStreams));
  return dashboard;
}

function webhookDeliveryGraphs(queue: IQueue): GraphWidget[] {
  return [
    graph('Webhook deliveries: events waiting in the queue', [
      queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'visible' }),
      queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum', label: 'oldest (s)' }),
    ]),
    graph(
      'Webhook subscriptions: status changes',
      (['failing', 'disabled', 'active'] as const).map((status) => webhookStatusMetric(status, status)),
    ),
  ];
}

function deliveryStreamGraphs(streams: NonNullable<MonitoringProps['deliveryStreams']>): GraphWidget[] {
  return [
    graph(
      'Audit trail: age of the oldest undelivered record (s)',
      streams.map(({ name, stream }) =>
        stream.metric('DeliveryToS3.DataFreshness', { period: PERIOD, statistic: 'Maximum', label: name }),
      ),
    ),
    graph(
      'Audit trail: share of S3 writes that succeeded',
      streams.map(({ name, stream }) =>
        stream.metric('DeliveryToS3.Success', { period: PERIOD, statistic: 'Minimum', label: name }),
      ),
    ),
  ];
}

const graph = (title: string, left: IMetric[]) => new GraphWidget({ title, left, width: 12, height: 6 });

/** The sum of every series of one metric of the service, one line per value of `dimensions`. */
const searchSum = (dimensions: string, metric: string) =>
  new MathExpression({
    expression: `SEARCH('{${METRICS_NAMESPACE},service,${dimensions}} MetricName="${metric}"', 'Sum', 300)`,
    label: '',
    period: PERIOD,
  });

/** A request metric of lib/observability/metrics.ts: Powertools adds the `service` dimension. */
const requestMetric = (metricName: string, route: string, statistic: string, label?: string) =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: SERVICE_NAME, route },
    statistic,
    period: PERIOD,
    // An alarm's metric goes without: a label would turn it into a metric-math query.
    ...(label ? { label } : {}),
  });

/** How many webhook subscriptions became `status` (lib/observability/metrics.ts recordWebhookStatus). */
const webhookStatusMetric = (status: 'failing' | 'disabled' | 'active', label?: string) =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: METRIC.webhookStatusChanges,
    dimensionsMap: { service: SERVICE_NAME, status },
    statistic: 'Sum',
    period: PERIOD,
    ...(label ? { label } : {}),
  });

/** An EventBridge Pipes metric of the outbox pipe, summed per period. */
const pipeMetric = (pipeName: string, metricName: string) =>
  new Metric({
    namespace: PIPES_NAMESPACE,
    metricName,
    dimensionsMap: { PipeName: pipeName },
    period: PERIOD,
    statistic: 'Sum',
  });
