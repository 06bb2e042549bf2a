import type {} from '@aws/lambda-invoke-store';
import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { invocationsShareProcess, LOG_LEVELS, wantedLogLevel } from '#lib/config/runtime';
import { SERVICE_NAME } from './names.ts';

/*
 * The service's structured logs: a Powertools Logger whose formatter writes an allow-list of
 * fields, so PHI stays out by construction. Callers pass ids and outcomes under the names below;
 * the formatter drops any other key (naming it in `droppedKeys`, never its value), and any value
 * that is not a string, number or boolean. Messages are string literals (the type refuses a
 * template with interpolations), so a value cannot ride in the message either.
 */

/** Every field a log line may carry besides the formatter's own (docs/observability.md). */
const LOG_FIELDS = [
  // Per invocation (lib/observability/invocation.ts)
  'requestId',
  'clientId',
  'route',
  'keyId',
  'latencyMs',
  // Ids and outcomes
  'organizationId',
  'portalAccountId',
  'portalId',
  'attachmentId',
  'runId',
  'batchId',
  'kind',
  'outcome',
  // Events of the outbox (lib/events/relay.ts): their id and type, never their data
  'eventId',
  'eventType',
  // The run credentials function: the attempt asked for, and a refusal's fixed code (lib/portal/credentials-source.ts)
  'attempt',
  'reason',
  'method',
  'status',
  'context',
  'size',
  'taken',
  'records',
  'total',
  'version',
  'keyring',
  'totpSecretSet',
  'passwordChanged',
  'totpSecretChanged',
  'movedOrganization',
  // Webhooks (lib/webhooks): ids, the attempt's status code or error code, how long it took; never a URL or secret
  'webhookId',
  'deliveryId',
  'eventType',
  'responseStatus',
  'durationMs',
  // Re-checks (lib/rechecks): how many were due, re-checked, batched; a group's request count; a refused
  // re-check's request (its id, as the audit trail and the executions' input name it) with its `reason`
  'due',
  'rechecked',
  'fired',
  'batches',
  'requests',
  'requestExternalId',
  // Payer APIs (lib/payer-endpoints, lib/payer-connections): ids only, never the client_id a payer issued
  'payerId',
  'payerConnectionId',
  // PAS subscriptions (lib/payer-subscriptions): our subscription's id, never its secret or the payer's words
  'subscriptionId',
  // Queues (lib/webhooks/queued-events.ts): the SQS message a failure is about, to find it in the dead-letter queue
  'messageId',
  // Errors: name and stack frames only, never a message (SDK and parser messages can quote data)
  'errorName',
  'stack',
] as const;
type LogField = (typeof LOG_FIELDS)[number];
type LogFields = Partial<Record<LogField, string | number | boolean | undefined>>;

const allowed: ReadonlySet<string> = new Set(LOG_FIELDS);
const isScalar = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value);

/**
 * Lambda's own fields (function name, its request id, cold start, X-Ray trace) plus the allowed
 * ones. `level` comes first and in lower case: the test stack's output filter reads it there.
 */
class AllowListFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const line: LogAttributes = {
      level: attributes.logLevel.toLowerCase(),
      message: attributes.message,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      function_name: attributes.lambdaContext?.functionName,
      function_request_id: attributes.lambdaContext?.awsRequestId,
      cold_start: attributes.lambdaContext?.coldStart,
      xray_trace_id: attributes.xRayTraceId,
    };
    const dropped: string[] = [];
    for (const [key, value] of Object.entries(additional)) {
      if (value === undefined) continue;
      if (allowed.has(key) && isScalar(value)) line[key] = value;
      else dropped.push(key);
    }
    if (dropped.length > 0) line.droppedKeys = dropped.join(',');
    return new LogItem({ attributes: line });
  }
}

/** The one Logger of a function: Powertools' middleware injects the Lambda context into it. */
export const logger = new Logger({ serviceName: SERVICE_NAME, logFormatter: new AllowListFormatter() });

/*
 * The level, as Powertools ranks the variables (wantedLogLevel, lib/config/runtime.ts). Checked on every line (a string comparison): a process may change it at run time, as the tests
 * do, and Powertools puts its initial level back at the start of every invocation.
 */
const syncLevel = () => {
  const wanted = wantedLogLevel();
  if (wanted !== logger.getLevelName() && LOG_LEVELS.includes(wanted)) {
    logger.setLogLevel(wanted as Parameters<Logger['setLogLevel']>[0]);
  }
};

/** A string literal: `string` itself (a template with interpolations, a variable) is refused. */
type Literal<M extends string> = string extends M ? never : M;
type Write = <M extends string>(message: Literal<M>, fields?: LogFields) => void;

/**
 * Where invocations share the process (AWS_LAMBDA_MAX_CONCURRENCY: Lambda Managed Instances, and the
 * local stack, local/invocations.ts), Powertools keeps each invocation's Lambda context and keys in the
 * InvokeStore, and a line written outside every invocation (a process's start, the local stack's demo
 * seeding) has none to go in: it gets an empty one, so it carries no invocation's function or keys.
 */
const outsideInvocations = (write: () => void) => {
  const store = globalThis.awslambda?.InvokeStore;
  if (!invocationsShareProcess() || !store || store.hasContext()) return write();
  store.run({}, write);
};

const writer =
  (write: (message: string, fields: LogAttributes) => void): Write =>
  (message, fields = {}) =>
    outsideInvocations(() => {
      syncLevel();
      write(message, fields);
    });

/** The service's log: a literal message and allow-listed fields (ids and outcomes, never PHI). */
export const log = {
  debug: writer((message, fields) => logger.debug(message, fields)),
  info: writer((message, fields) => logger.info(message, fields)),
  warn: writer((message, fields) => logger.warn(message, fields)),
  error: writer((message, fields) => logger.error(message, fields)),
};
