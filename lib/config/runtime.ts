import { type Env, environment } from './environment.ts';

/*
 * What the Lambda runtime, Powertools' documented switches and the local stack tell a running
 * function, read on every use: the trace header changes with each invocation, and tests turn
 * tracing, metrics and the log level on and off between cases.
 */

/** The function runs in Lambda (the runtime sets AWS_LAMBDA_FUNCTION_NAME; `npm run invoke` too). */
export const onLambda = (env: Env = environment()) => Boolean(env.AWS_LAMBDA_FUNCTION_NAME);

/**
 * Invocations share the process (AWS_LAMBDA_MAX_CONCURRENCY: Lambda Managed Instances, and the local
 * stack, local/invocations.ts).
 */
export const invocationsShareProcess = () => Boolean(environment().AWS_LAMBDA_MAX_CONCURRENCY);

/** The levels a Powertools Logger knows, in any case. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'];

/**
 * The log level asked for, as Powertools ranks the variables: Lambda's own (AWS_LAMBDA_LOG_LEVEL), then
 * POWERTOOLS_LOG_LEVEL (set by CDK from context), then LOG_LEVEL (the local stack and the tests).
 */
export const wantedLogLevel = () => {
  const { AWS_LAMBDA_LOG_LEVEL, POWERTOOLS_LOG_LEVEL, LOG_LEVEL } = environment();
  return (AWS_LAMBDA_LOG_LEVEL ?? POWERTOOLS_LOG_LEVEL ?? LOG_LEVEL ?? 'INFO').toUpperCase();
};

/** POWERTOOLS_METRICS_DISABLED, lower-cased, when set: it decides whether metrics are written, either way. */
export const metricsDisabledSwitch = () => environment().POWERTOOLS_METRICS_DISABLED?.toLowerCase();

/** Tracing is on unless POWERTOOLS_TRACE_ENABLED=false. */
export const tracingEnabled = () => environment().POWERTOOLS_TRACE_ENABLED?.toLowerCase() !== 'false';

/** The Lambda X-Ray daemon's UDP address (host:port), set by the runtime where active tracing is on. */
export const xrayDaemonAddress = () => environment().AWS_XRAY_DAEMON_ADDRESS;

/** The invocation's trace header as the runtime last set it: read per call, it changes with each invocation. */
export const traceHeaderVariable = () => environment()._X_AMZN_TRACE_ID;
