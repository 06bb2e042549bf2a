import { randomFillSync } from 'node:crypto';
import type { BuildMiddleware, MetadataBearer, MiddlewareStack, Provider } from '@smithy/types';
import { traceHeaderVariable, tracingEnabled, xrayDaemonAddress } from '#lib/config/runtime';
import { type AwsSubsegment, sendAfterTheAnswer, type TraceContext, traceContextOf } from './xray.ts';

/*
 * One X-Ray subsegment per AWS SDK call, sent to the Lambda X-Ray daemon as the X-Ray SDK does in
 * Lambda, without the X-Ray SDK (docs/observability.md: it cost every bundle about 120 KB and each
 * cold start about 25 ms). Lambda's active tracing records the function's segment; the runtime
 * gives each invocation its trace header (Root, Parent, Sampled) and the daemon's UDP address.
 * Outside Lambda (no header or no daemon: vitest, the local stack), with Sampled=0 or with
 * POWERTOOLS_TRACE_ENABLED=false, nothing is sent. What is recorded is allow-listed: service,
 * operation, region, request id, retries, status and the table or bucket name; never a key, an
 * item, a body, a response or an error message (they can quote stored data).
 */

const MIDDLEWARE_NAME = 'xRaySubsegments';

/**
 * Random 64-bit ids (subsegments, exceptions) from a pool filled 256 at a time: one `randomBytes(8)` per
 * SDK call cost more than the rest of the subsegment (bench/run.ts's profile, docs/performance.md).
 */
const ID_BYTES = 8;
const idPool = Buffer.alloc(ID_BYTES * 256);
let idAt = idPool.length;
const newId = () => {
  if (idAt === idPool.length) {
    randomFillSync(idPool);
    idAt = 0;
  }
  idAt += ID_BYTES;
  return idPool.toString('hex', idAt - ID_BYTES, idAt);
};

/** Error names the SDK's retry strategy treats as throttling (@smithy/service-error-classification). */
const THROTTLING_ERRORS = new Set([
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);

interface SdkError {
  name?: string;
  $metadata?: MetadataBearer['$metadata'];
  $retryable?: { throttling?: boolean };
}

/** The call's resource names that are not PHI: the table's (DynamoDB) and the bucket's (S3), never a key. */
const resourceNamesOf = (input: Record<string, unknown>) => ({
  ...(typeof input.TableName === 'string' ? { table_name: input.TableName } : {}),
  ...(input.RequestItems && typeof input.RequestItems === 'object'
    ? { table_names: Object.keys(input.RequestItems) }
    : {}),
  ...(typeof input.Bucket === 'string' ? { bucket_name: input.Bucket } : {}),
});

/** What a finished call adds to its subsegment: its outcome, with the X-Ray SDK's flags per status. */
const outcomeOf = (
  metadata: MetadataBearer['$metadata'] | undefined,
  contentLength: string | undefined,
  error: SdkError | undefined,
) => {
  const status = metadata?.httpStatusCode;
  const throttle =
    status === 429 || (error && (error.$retryable?.throttling === true || THROTTLING_ERRORS.has(error.name ?? '')));
  return {
    http:
      status === undefined
        ? undefined
        : { response: { status, ...(contentLength ? { content_length: Number(contentLength) } : {}) } },
    // A call without an answer (a network failure, a timeout) is a fault, as the X-Ray SDK records it.
    ...(status !== undefined && status >= 400 && status < 500 ? { error: true as const } : {}),
    ...((status !== undefined && status >= 500) || (error && status === undefined) ? { fault: true as const } : {}),
    ...(throttle ? { throttle: true as const } : {}),
    // The error's name only: X-Ray shows it on the subsegment; its message can quote stored data.
    ...(error
      ? {
          cause: {
            exceptions: [{ id: newId(), type: error.name ?? 'Error', remote: true as const }],
          },
        }
      : {}),
  };
};

/** The invocation's trace header: the runtime's per-invocation store where it has one, else the variable. */
const currentTraceHeader = (): string | undefined =>
  (
    globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId?: () => string | undefined } } }
  ).awslambda?.InvokeStore?.getXRayTraceId?.() ?? traceHeaderVariable();

const subsegmentMiddleware =
  (region: Provider<string> | string | undefined): BuildMiddleware<object, MetadataBearer> =>
  (next, context) =>
  async (args) => {
    const daemonAddress = xrayDaemonAddress();
    const trace: TraceContext | undefined =
      daemonAddress && tracingEnabled() ? traceContextOf(currentTraceHeader()) : undefined;
    if (!trace || !daemonAddress) return next(args);
    const id = newId();
    // Downstream services (Step Functions) join the trace under this call, as with the X-Ray SDK.
    const request = args.request as { headers?: Record<string, string> } | undefined;
    if (request?.headers) {
      request.headers['X-Amzn-Trace-Id'] =
        `Root=${trace.root};Parent=${id};Sampled=${trace.sampled ? 1 : 0}${trace.extra}`;
    }
    if (!trace.sampled) return next(args);

    const startTime = Date.now() / 1000;
    // The call's own path only notes its end and outcome; the subsegment is built and sent once the
    // answer has gone on (xray.ts sendAfterTheAnswer), so the caller does not wait for either.
    const record = (metadata: MetadataBearer['$metadata'] | undefined, contentLength?: string, error?: SdkError) => {
      const endTime = Date.now() / 1000;
      sendAfterTheAnswer(async (): Promise<AwsSubsegment> => {
        const attempts = metadata?.attempts ?? 1;
        return {
          type: 'subsegment',
          id,
          trace_id: trace.root,
          parent_id: trace.parent,
          name: context.clientName?.replace(/Client$/, '') ?? 'AWS',
          namespace: 'aws',
          start_time: startTime,
          end_time: endTime,
          aws: {
            operation: context.commandName?.replace(/Command$/, '') ?? 'Unknown',
            region: typeof region === 'function' ? await region() : region,
            request_id: metadata?.requestId,
            ...(context.clientName === 'S3Client' && metadata?.extendedRequestId
              ? { id_2: metadata.extendedRequestId }
              : {}),
            retries: Math.max(0, attempts - 1),
            ...resourceNamesOf((args.input ?? {}) as Record<string, unknown>),
          },
          ...outcomeOf(metadata, contentLength, error),
        };
      }, daemonAddress);
    };
    try {
      const result = await next(args);
      const headers = (result.response as { headers?: Record<string, string> } | undefined)?.headers;
      record(result.output?.$metadata, headers?.['content-length']);
      return result;
    } catch (error) {
      record((error as SdkError | undefined)?.$metadata, undefined, (error ?? {}) as SdkError);
      throw error;
    }
  };

/** The client, each of its calls an X-Ray subsegment inside a sampled Lambda invocation (see above). */
export const traced = <
  Client extends {
    config: { region?: Provider<string> | string };
    middlewareStack: MiddlewareStack<object, MetadataBearer>;
  },
>(
  client: Client,
): Client => {
  // Build step, as the X-Ray SDK: before signing, so the trace header goes out; once per call, retries included.
  client.middlewareStack.add(subsegmentMiddleware(client.config.region), {
    step: 'build',
    name: MIDDLEWARE_NAME,
    override: true,
  });
  return client;
};
