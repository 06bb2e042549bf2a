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
  /** Dead-letter queues: an alarm as soon as one holds a message. */
  deadLetterQueues: ReadonlyArray<{ name: string; queue: IQueue }>;
  stateMachines: ReadonlyArray<{ name: string; stateMachine: IStateMachine }>;
  /** Firehose streams to S3 (the audit trail's): an alarm when delivery fails or falls behind. */
  deliveryStreams?: ReadonlyArray<{ name: string; stream: IDeliveryStream }>;
  /** Webhook delivery on AWS (the events stack): its functions' errors, the outbox pipe's failures, subscriptions' health. */
  webhookDelivery?: WebhookDeliveryMonitoring;
}

export interface WebhookDeliveryMonitoring {
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
 * breaching: a quiet route is not an incident.
 */
export class Monitoring extends Construct {
  readonly topic: ITopic;
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { config } = props;
    this.topic = props.config.alarmTopicArn
      ? Topic.fromTopicArn(this, 'AlarmTopic', props.config.alarmTopicArn)
      : this.ownTopic(config);
    const action = new SnsAction(this.topic);
    const alarmName = (...parts: string[]) => ['ServiceReview', config.stage, ...parts].join('-');
    const alarm = (
      id: string,
      name: string,
      metric: IMetric,
      threshold: number,
      description: string,
      periods = 1,
      comparisonOperator = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    ) => {
      const created = new Alarm(this, id, {
        alarmName: name,
        alarmDescription: description,
        metric,
        threshold,
        comparisonOperator,
        evaluationPeriods: periods,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };

    for (const route of props.routeNames) {
      alarm(
        `${route}ServerErrors`,
        alarmName(route, '5xx'),
        requestMetric(METRIC.serverErrors, route, 'Average'),
        SERVER_ERROR_RATE_THRESHOLD,
        `${route}: 5xx answers are ${SERVER_ERROR_RATE_THRESHOLD * 100}% or more of its calls in 5 minutes.`,
      );
      alarm(
        `${route}LatencyP99`,
        alarmName(route, 'p99'),
        requestMetric(METRIC.latency, route, 'p99'),
        config.latencyP99Ms,
        `${route}: p99 latency at or above ${config.latencyP99Ms} ms for 15 minutes.`,
        3,
      );
    }
    for (const { name, fn } of props.functions) {
      alarm(
        `${name}Throttles`,
        alarmName(name, 'throttles'),
        fn.function.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        1,
        `${name}: Lambda throttled an invocation (account or reserved concurrency exhausted).`,
      );
    }
    for (const { name, queue } of props.deadLetterQueues) {
      alarm(
        `${name}DeadLetters`,
        alarmName(name, 'dead-letters'),
        queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
        1,
        `${name}: an event failed every attempt and waits in the dead-letter queue.`,
      );
    }
    for (const { name, stateMachine } of props.stateMachines) {
      alarm(
        `${name}Failures`,
        alarmName(name, 'failures'),
        new MathExpression({
          expression: 'failed + timedOut',
          usingMetrics: {
            failed: stateMachine.metricFailed({ period: PERIOD, statistic: 'Sum' }),
            timedOut: stateMachine.metricTimedOut({ period: PERIOD, statistic: 'Sum' }),
          },
          period: PERIOD,
          label: `${name} failed or timed out`,
        }),
        1,
        `${name}: an execution failed or timed out.`,
      );
    }

    for (const { name, stream } of props.deliveryStreams ?? []) {
      alarm(
        `${name}DeliveryFailures`,
        alarmName(name, 'delivery-failures'),
        stream.metric('DeliveryToS3.Success', { period: PERIOD, statistic: 'Minimum' }),
        1,
        `${name}: a write to S3 failed (Firehose retries for 24 hours, then drops the records).`,
        1,
        ComparisonOperator.LESS_THAN_THRESHOLD,
      );
      alarm(
        `${name}DeliveryFreshness`,
        alarmName(name, 'delivery-freshness'),
        stream.metric('DeliveryToS3.DataFreshness', { period: PERIOD, statistic: 'Maximum' }),
        DELIVERY_FRESHNESS_THRESHOLD_SECONDS,
        `${name}: the oldest record waiting for S3 is ${DELIVERY_FRESHNESS_THRESHOLD_SECONDS / 60} minutes old or more.`,
      );
    }

    if (props.webhookDelivery) this.addWebhookDeliveryAlarms(props.webhookDelivery, alarm, alarmName);
    this.dashboard = this.buildDashboard(props, alarmName());
  }

  /**
   * The delivery functions' errors; the outbox pipe's failed or timed-out executions (it retries them,
   * but every one holds back its shard's events); and a subscription marked failing (a delivery used up
   * its day of retries) or disabled (failing for three days): the WebhookStatusChanges metric of
   * lib/webhooks/delivery.ts, whose log line names the subscription. Their dead-letter queues are in
   * `deadLetterQueues`.
   */
  private addWebhookDeliveryAlarms(
    { functions, pipeName }: WebhookDeliveryMonitoring,
    alarm: (id: string, name: string, metric: IMetric, threshold: number, description: string) => Alarm,
    alarmName: (...parts: string[]) => string,
  ) {
    for (const { name, fn } of functions) {
      alarm(
        `${name}Errors`,
        alarmName(name, 'errors'),
        fn.function.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        1,
        `${name}: an invocation failed or timed out.`,
      );
    }
    const pipeMetric = (metricName: string) =>
      new Metric({
        namespace: PIPES_NAMESPACE,
        metricName,
        dimensionsMap: { PipeName: pipeName },
        period: PERIOD,
        statistic: 'Sum',
      });
    alarm(
      'OutboxPipeFailures',
      alarmName('OutboxPipe', 'failures'),
      new MathExpression({
        expression: 'failed + timedOut',
        usingMetrics: { failed: pipeMetric('ExecutionFailed'), timedOut: pipeMetric('ExecutionTimeout') },
        period: PERIOD,
        label: 'Outbox pipe executions failed or timed out',
      }),
      1,
      'OutboxPipe: putting outbox events on the bus failed (retried; the shard waits, events arrive late).',
    );
    for (const status of ['failing', 'disabled'] as const) {
      alarm(
        `Webhook${status === 'failing' ? 'Failing' : 'Disabled'}`,
        alarmName('webhook', status),
        webhookStatusMetric(status),
        1,
        status === 'failing'
          ? 'A webhook subscription is failing: a delivery used up its retries (log "Webhook subscription status changed").'
          : 'A webhook subscription was disabled after three days of failures (log "Webhook subscription status changed").',
      );
    }
  }

  /** KMS-encrypted (a key CloudWatch may use: the AWS managed SNS key does not let it publish), TLS only. */
  private ownTopic(config: ServiceConfig): Topic {
    const key = new Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the alarm topic (alarm names and states only)',
      enableKeyRotation: true,
    });
    key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: `Service review ${config.stage} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    if (config.alarmEmail) topic.addSubscription(new EmailSubscription(config.alarmEmail));
    return topic;
  }

  private buildDashboard(props: MonitoringProps, name: string): Dashboard {
    const perRoute = (metric: string, statistic: string) =>
      props.routeNames.map((route) => requestMetric(metric, route, statistic, route));
    const search = (dimensions: string, metric: string, label: string) =>
      new MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},service,${dimensions}} MetricName="${metric}"', 'Sum', 300)`,
        label,
        period: PERIOD,
      });
    const graph = (title: string, left: IMetric[]) => new GraphWidget({ title, left, width: 12, height: 6 });
    const dashboard = new Dashboard(this, 'Dashboard', { dashboardName: name, defaultInterval: Duration.hours(3) });
    dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }));
    dashboard.addWidgets(
      graph('Requests per route', perRoute(METRIC.requests, 'Sum')),
      graph('p99 latency per route (ms)', perRoute(METRIC.latency, 'p99')),
    );
    dashboard.addWidgets(
      graph('5xx per route', perRoute(METRIC.serverErrors, 'Sum')),
      graph('4xx per route', perRoute(METRIC.clientErrors, 'Sum')),
    );
    dashboard.addWidgets(
      graph('Attachment verdicts', [search('verdict', METRIC.attachmentVerdicts, '')]),
      graph('Automation runs by kind and outcome', [search('kind,outcome', METRIC.automationRuns, '')]),
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
    if (props.webhookDelivery) {
      const { queue } = props.webhookDelivery;
      dashboard.addWidgets(
        graph('Webhook deliveries: events waiting in the queue', [
          queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum', label: 'visible' }),
          queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum', label: 'oldest (s)' }),
        ]),
        graph(
          'Webhook subscriptions: status changes',
          (['failing', 'disabled', 'active'] as const).map((status) => webhookStatusMetric(status, status)),
        ),
      );
    }
    if (props.deliveryStreams?.length) {
      dashboard.addWidgets(
        graph(
          'Audit trail: age of the oldest undelivered record (s)',
          props.deliveryStreams.map(({ name, stream }) =>
            stream.metric('DeliveryToS3.DataFreshness', { period: PERIOD, statistic: 'Maximum', label: name }),
          ),
        ),
        graph(
          'Audit trail: share of S3 writes that succeeded',
          props.deliveryStreams.map(({ name, stream }) =>
            stream.metric('DeliveryToS3.Success', { period: PERIOD, statistic: 'Minimum', label: name }),
          ),
        ),
      );
    }
    return dashboard;
  }
}

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
