import { setTimeout as sleep } from 'node:timers/promises';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { NodeHttpHandler, streamCollector } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

/**
 * The two CloudWatch Logs calls the audit trail makes (CreateLogStream, PutLogEvents), spoken as the
 * service's JSON 1.1 protocol directly: `@aws-sdk/client-cloudwatch-logs` was 78 KB of every audited
 * function's bundle, parsed at every cold start (its schema module covers every operation and cannot
 * be tree-shaken), while signing, HTTP and credentials are SDK pieces the DynamoDB client bundles anyway
 * (docs/performance.md). Not an SDK client, so X-Ray's `traced(client)` does not apply: its calls
 * are not traced as subsegments.
 */

export interface InputLogEvent {
  /** Milliseconds since the epoch. */
  timestamp: number;
  message: string;
}

export interface PutLogEventsResult {
  /** Set when CloudWatch Logs refused some events (too old, too new, past the group's retention). */
  rejectedLogEventsInfo?: {
    tooNewLogEventStartIndex?: number;
    tooOldLogEventEndIndex?: number;
    expiredLogEventEndIndex?: number;
  };
}

export interface CloudWatchLogsWriter {
  createLogStream(input: { logGroupName: string; logStreamName: string }): Promise<void>;
  putLogEvents(input: {
    logGroupName: string;
    logStreamName: string;
    logEvents: InputLogEvent[];
  }): Promise<PutLogEventsResult>;
}

/** An error answer of CloudWatch Logs: `name` is its `__type` without the namespace. */
export class CloudWatchLogsError extends Error {
  constructor(
    override readonly name: string,
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
  }
}

export interface CloudWatchLogsWriterOptions {
  /** Default: AWS_REGION. */
  region?: string;
  /** Default: AWS_ENDPOINT_URL_CLOUDWATCH_LOGS (the SDK's own variable), else the region's public endpoint. */
  endpoint?: string;
  /** Default: the SDK's default chain (`defaultProvider()`). */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Attempts per call, the first included, for throttling, 5xx and network errors. Default 3. */
  maxAttempts?: number;
  /** Upper bound of the first retry's random delay, doubled each retry (full jitter). Default 50 ms. */
  baseDelayMs?: number;
  /** Per attempt: the audit write runs before the function answers, so a hung call must not hold it. */
  requestTimeoutMs?: number;
}

const TARGET_PREFIX = 'Logs_20140328';
const RETRYABLE_TYPES = new Set(['ThrottlingException', 'ServiceUnavailableException']);

export const cloudWatchLogsEndpoint = (region: string, env: Record<string, string | undefined> = process.env) =>
  env.AWS_ENDPOINT_URL_CLOUDWATCH_LOGS ||
  `https://logs.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;

/** No HTTP answer (connection refused or reset, timeout); named so that the audit trail's error log says so. */
class NoAnswerError extends Error {
  override name = 'NoAnswerError';
}

/** Retried: throttling, the service's 5xx, and no answer at all (connection refused or reset, timeout). */
const isRetryable = (error: unknown) =>
  error instanceof CloudWatchLogsError
    ? error.statusCode >= 500 || error.statusCode === 429 || RETRYABLE_TYPES.has(error.name)
    : error instanceof NoAnswerError;

const errorOf = (statusCode: number, errorTypeHeader: string | undefined, body: string) => {
  let parsed: { __type?: unknown; message?: unknown; Message?: unknown } = {};
  try {
    parsed = JSON.parse(body) ?? {};
  } catch {
    // not JSON (a proxy's page): the status says enough
  }
  const type = String(errorTypeHeader?.split(':')[0] || parsed.__type || `HttpStatus${statusCode}`);
  const message = parsed.message ?? parsed.Message;
  return new CloudWatchLogsError(
    type.slice(type.lastIndexOf('#') + 1),
    typeof message === 'string' ? message : `CloudWatch Logs answered ${statusCode}`,
    statusCode,
  );
};

export const cloudWatchLogsWriter = (options: CloudWatchLogsWriterOptions = {}): CloudWatchLogsWriter => {
  const region = options.region ?? process.env.AWS_REGION;
  const maxAttempts = options.maxAttempts ?? 3;
  const baseDelayMs = options.baseDelayMs ?? 50;
  const http = new NodeHttpHandler({
    connectionTimeout: 1000,
    requestTimeout: options.requestTimeoutMs ?? 3000,
    throwOnRequestTimeout: true, // else a late answer is only a warning, and the call waits on
  });
  let resolved: { url: URL; signer: SignatureV4 } | undefined;
  const endpointAndSigner = () => {
    if (!region) throw new Error('CloudWatch Logs: AWS_REGION is not set');
    resolved ??= {
      url: new URL(options.endpoint ?? cloudWatchLogsEndpoint(region)),
      signer: new SignatureV4({
        service: 'logs',
        region,
        credentials: options.credentials ?? defaultProvider(),
        sha256: Sha256,
      }),
    };
    return resolved;
  };

  const attempt = async (target: string, body: string): Promise<unknown> => {
    const { url, signer } = endpointAndSigner();
    const request = new HttpRequest({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.1',
        'content-length': String(Buffer.byteLength(body)),
        'x-amz-target': `${TARGET_PREFIX}.${target}`,
      },
      body,
    });
    const signed = (await signer.sign(request)) as HttpRequest;
    let statusCode: number;
    let errorType: string | undefined;
    let text: string;
    try {
      const { response } = await http.handle(signed);
      statusCode = response.statusCode;
      errorType = response.headers['x-amzn-errortype'];
      text = Buffer.from(await streamCollector(response.body)).toString('utf8');
    } catch (error) {
      throw new NoAnswerError(`CloudWatch Logs did not answer: ${(error as Error).message}`, { cause: error });
    }
    if (statusCode >= 200 && statusCode < 300) return text ? JSON.parse(text) : {};
    throw errorOf(statusCode, errorType, text);
  };

  const call = async (target: string, input: object): Promise<unknown> => {
    endpointAndSigner(); // a missing region or a bad endpoint fails at once, never retried
    const body = JSON.stringify(input);
    for (let attemptNumber = 1; ; attemptNumber++) {
      try {
        return await attempt(target, body);
      } catch (error) {
        if (attemptNumber >= maxAttempts || !isRetryable(error)) throw error;
        await sleep(Math.random() * baseDelayMs * 2 ** (attemptNumber - 1));
      }
    }
  };

  return {
    createLogStream: async (input) => {
      await call('CreateLogStream', input);
    },
    putLogEvents: async (input) => (await call('PutLogEvents', input)) as PutLogEventsResult,
  };
};

/** Module-scope writer (the audit trail's log group); region and credentials are resolved on its first call. */
export const cloudWatchLogs = cloudWatchLogsWriter();
