import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { metricsDisabledSwitch, onLambda } from '#lib/config/runtime';
import { afterTheAnswer } from './after-answer.ts';
import { log } from './logger.ts';
import { METRIC, METRICS_NAMESPACE, SERVICE_NAME } from './names.ts';

/*
 * Application metrics in CloudWatch's embedded metric format (EMF): lines on stdout that
 * CloudWatch Logs turns into metrics, no API call. One namespace; names and dimensions are
 * contracts of the alarms and the dashboard (names.ts, infra/constructs/monitoring.ts).
 */

/**
 * Inside Lambda by default; outside it (vitest, the local stack) EMF lines would only flood stdout.
 * POWERTOOLS_METRICS_DISABLED decides when set, either way (`false` turns them on locally).
 */
const decide = () => {
  const disabled = metricsDisabledSwitch();
  if (disabled !== undefined) return !['true', '1', 'yes', 'on'].includes(disabled);
  return onLambda();
};
/**
 * Decided once per process, on first use, as Powertools reads its own variables when the Metrics is made:
 * reading `process.env` on every request cost more than adding the metrics (bench/run.ts, docs/performance.md).
 */
let decided: boolean | undefined;
const enabled = () => (decided ??= decide());

/**
 * Made on first use, inside an invocation: where invocations share the process (local/invocations.ts),
 * the constructor writes to the invocation's store, which exists only inside one.
 */
let instance: Metrics | undefined;
const metrics = () => (instance ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME }));

export interface RequestOutcome {
  /** The route's function name (lib/routes/route-table.ts functionNameOf). */
  route: string;
  /** The status sent; none when the function failed (API Gateway then answers 502). */
  status: number | undefined;
  latencyMs: number;
}

/** One API call: one EMF line with the `route` dimension, written once the caller has its answer (after-answer.ts). */
export const recordRequest = ({ route, status, latencyMs }: RequestOutcome) => {
  if (!enabled()) return;
  afterTheAnswer(() => {
    try {
      publishRequest({ route, status, latencyMs });
    } catch (error) {
      // Nothing is waiting for it to fail: said in the log instead, name only.
      log.error('Request metrics not written', { errorName: (error as Error | undefined)?.name });
    }
  });
};

const publishRequest = ({ route, status, latencyMs }: RequestOutcome) => {
  const request = metrics();
  request.addDimension('route', route);
  request.addMetric(METRIC.requests, MetricUnit.Count, 1);
  request.addMetric(
    METRIC.clientErrors,
    MetricUnit.Count,
    status !== undefined && status >= 400 && status < 500 ? 1 : 0,
  );
  request.addMetric(METRIC.serverErrors, MetricUnit.Count, status === undefined || status >= 500 ? 1 : 0);
  request.addMetric(METRIC.latency, MetricUnit.Milliseconds, latencyMs);
  request.publishStoredMetrics();
};

/** A count under its own dimensions, flushed at once. */
const count = (name: string, dimensions: Record<string, string>) => {
  if (!enabled()) return;
  const single = metrics().singleMetric();
  single.addDimensions(dimensions);
  single.addMetric(name, MetricUnit.Count, 1);
};

export const recordAttachmentVerdict = (verdict: string) => count(METRIC.attachmentVerdicts, { verdict });

export const recordAutomationRun = (kind: string, outcome: string) => count(METRIC.automationRuns, { kind, outcome });

/** A webhook subscription became `failing`, `disabled` or `active` again (the alarms watch the first two). */
export const recordWebhookStatus = (status: string) => count(METRIC.webhookStatusChanges, { status });
