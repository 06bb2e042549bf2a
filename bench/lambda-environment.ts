/**
 * What a deployed function runs with, for every bench that times one: the variables the CDK construct sets
 * (infra/constructs/service-function.ts: NODE_OPTIONS, Powertools' settings of the default config), those
 * the Lambda runtime sets (function name, memory, region, log group and stream, the X-Ray daemon's address;
 * the trace header per invocation, sampled), and a UDP socket the bench owns standing in for the X-Ray
 * daemon, counting what it receives. With them, metrics are on (lib/observability/metrics.ts: inside Lambda),
 * tracing is on (a subsegment per AWS call, sent to the daemon) and the audit trail writes its lines on
 * stdout only, as deployed: no LOCAL_STATE_DIR, which would also copy them to a local file. The route's own
 * variables (TABLE_NAME, BUCKET_NAME, …: route-access.ts) and the endpoints of the emulators are the bench's.
 */
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { openSync, writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '#infra/config';
import { FUNCTION_NODE_OPTIONS, FUNCTION_RUNTIME, powertoolsEnvironment } from '#infra/constructs/service-function';

/** The default memory of a ServiceFunction (its `memorySize`). */
const MEMORY_MB = '1024';

/** The variables of a function deployed as `functions/<handler>.ts`, as the construct and the runtime set them. */
export const lambdaEnvironment = (handler: string, daemonAddress: string): Record<string, string> => {
  const functionName = `service-review-${handler.replaceAll('/', '-')}`;
  return {
    NODE_OPTIONS: FUNCTION_NODE_OPTIONS,
    ...powertoolsEnvironment(DEFAULT_CONFIG),
    AWS_LAMBDA_FUNCTION_NAME: functionName,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: MEMORY_MB,
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
    AWS_LAMBDA_LOG_STREAM_NAME: '2026/11/25/[$LATEST]bench',
    AWS_EXECUTION_ENV: `AWS_Lambda_${FUNCTION_RUNTIME.name}`,
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_XRAY_DAEMON_ADDRESS: daemonAddress,
    AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
    _AWS_XRAY_DAEMON_ADDRESS: daemonAddress.split(':')[0]!,
    _AWS_XRAY_DAEMON_PORT: daemonAddress.split(':')[1]!,
    // The X-Ray SDK (the typical peer's Tracer) takes it as the sign it runs in Lambda.
    LAMBDA_TASK_ROOT: '/var/task',
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
  };
};

/** A sampled trace header as the runtime gives each invocation (`_X_AMZN_TRACE_ID`). */
export const traceHeader = () => {
  const epoch = Math.floor(Date.now() / 1000).toString(16);
  return `Root=1-${epoch}-${randomBytes(12).toString('hex')};Parent=${randomBytes(8).toString('hex')};Sampled=1`;
};

/**
 * The local stand-ins for KMS and Secrets Manager (the secrets keyring, the cursor, fingerprint and RPA token
 * keys), each named by its own variable: files under `stateDir`, where the seeding (with LOCAL_STATE_DIR) wrote them.
 */
export const localKeyFiles = (stateDir: string): Record<string, string> => ({
  LOCAL_SECRETS_KEY_FILE: join(stateDir, 'secrets.key'),
  LOCAL_CURSOR_KEY_FILE: join(stateDir, 'cursor.key'),
  LOCAL_IDEMPOTENCY_FINGERPRINT_KEY_FILE: join(stateDir, 'idempotency-fingerprint.key'),
  LOCAL_RPA_TOKEN_KEY_FILE: join(stateDir, 'rpa-token.key'),
});

export interface XrayDaemon {
  /** `127.0.0.1:<port>`, for AWS_XRAY_DAEMON_ADDRESS. */
  address: string;
  /** Datagrams received so far (one per subsegment). */
  received: () => number;
  close: () => Promise<void>;
}

/** A UDP socket in place of the X-Ray daemon: it takes the datagrams and counts them. */
export const startXrayDaemon = async (): Promise<XrayDaemon> => {
  const socket = createSocket('udp4');
  let received = 0;
  socket.on('message', () => {
    received += 1;
  });
  await new Promise<void>((bound) => socket.bind(0, '127.0.0.1', bound));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    received: () => received,
    close: () => new Promise<void>((closed) => socket.close(() => closed())),
  };
};

export interface InProcessLambda {
  /** Writes to the bench's real stdout (the handlers' lines go to the sink). */
  print: (text: string) => void;
  /** A fresh sampled trace header, as the runtime sets one per invocation. */
  nextInvocation: () => void;
}

/**
 * For benches that run handlers in their own process (after the local stack started): the deployed
 * variables set on this process, the local key files named one by one instead of LOCAL_STATE_DIR (so the
 * audit lines go to stdout only, as deployed), and stdout sent to /dev/null with one write(2) per line, as
 * Lambda's pipe takes them (EMF, log and audit lines would otherwise flood the bench's output). `observe`
 * sees every line written.
 */
export const runAsDeployedInProcess = (
  handler: string,
  daemonAddress: string,
  observe?: (line: string | Uint8Array) => void,
): InProcessLambda => {
  const stateDir = process.env.LOCAL_STATE_DIR;
  Object.assign(process.env, lambdaEnvironment(handler, daemonAddress), stateDir ? localKeyFiles(stateDir) : {});
  delete process.env.LOCAL_STATE_DIR;
  delete process.env.LOCAL_AUDIT_FILE;
  const stdout = process.stdout;
  const print = stdout.write.bind(stdout);
  const sink = openSync('/dev/null', 'w');
  stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    observe?.(chunk);
    if (typeof chunk === 'string') writeSync(sink, chunk);
    else writeSync(sink, chunk);
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof stdout.write;
  return {
    print: (text) => {
      print(text);
    },
    nextInvocation: () => {
      process.env._X_AMZN_TRACE_ID = traceHeader();
    },
  };
};
