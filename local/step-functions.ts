import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BROWSER_CONCURRENCY, type StateMachineKey } from '#lib/runs/state-machines';
import { machinesOf, stateMachineOf } from './step-functions/machines.ts';
import { type Emulator, ServiceError, type StepFunctionsOptions } from './step-functions/model.ts';
import { operations, type RequestBody } from './step-functions/operations.ts';

export type { StepFunctionsOptions } from './step-functions/model.ts';

/**
 * A local AWS Step Functions on loopback: the JSON 1.0 protocol (`POST /`, `X-Amz-Target:
 * AWSStepFunctions.<Op>`) for StartExecution, DescribeExecution, GetExecutionHistory,
 * StopExecution and ListExecutions, so handlers and tests use the real @aws-sdk/client-sfn. It runs
 * the definitions of lib/runs/state-machines.ts with aws-local-stepfunctions (Retry, Catch, Map,
 * TimeoutSeconds as the definitions say), every Task bound to its automation task's handler,
 * invoked as Lambda would: a JSON copy of the input, a Lambda context, a JSON result, and a thrown
 * error reported by its name. State is in memory; nothing here is imported by functions/ or lib/.
 *
 * As EventBridge does on AWS, an execution that ends TIMED_OUT, ABORTED or FAILED is handed, as a
 * "Step Functions Execution Status Change" event, to the automation's event functions
 * (`automationEventFunctions`, invoked asynchronously); and each browser function runs at most
 * `browserConcurrency` invocations at once, as its reserved concurrency bounds it on AWS: one more is
 * throttled (`Lambda.TooManyRequestsException`), which the definitions retry.
 */

export interface LocalStepFunctions {
  endpoint: string;
  stateMachineArns: Record<StateMachineKey, string>;
  /** What the API functions need: the SDK's endpoint variable and the two ARNs. */
  env: Record<string, string>;
  /**
   * Aborts running executions, then stops listening. Their end is not delivered as an event: like a
   * crash, closing loses them, and the next start fails their runs as lost (local/lost-runs.ts).
   */
  close(): Promise<void>;
}

/** One request of the JSON 1.0 protocol: its operation's answer, or the error in AWS's shape. */
async function handle(em: Emulator, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const reply = (status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/x-amz-json-1.0',
      'Content-Length': Buffer.byteLength(text),
      'x-amzn-RequestId': randomUUID(),
    });
    res.end(text);
  };
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('AWSStepFunctions.')
      ? operations[target.slice('AWSStepFunctions.'.length)]
      : undefined;
    if (req.method !== 'POST' || !operation)
      throw new ServiceError('UnknownOperationException', `Unknown operation: ${target}`);
    let body: RequestBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      throw new ServiceError('SerializationException', 'The request body is not JSON');
    }
    reply(200, operation(em, body));
  } catch (error) {
    if (error instanceof ServiceError) {
      reply(error.status, { __type: `com.amazonaws.swf.service.v2.model#${error.type}`, message: error.message });
    } else {
      process.stderr.write(`local step functions: ${(error as Error).stack ?? String(error)}\n`);
      reply(500, { __type: 'com.amazonaws.swf.service.v2.model#InternalFailure', message: 'Internal failure' });
    }
  }
}

/** Aborts running executions, waits for them and for event deliveries, then stops listening. */
async function close(em: Emulator, server: Server): Promise<void> {
  em.closing = true;
  const running = [...em.executions.values()].filter((execution) => execution.status === 'RUNNING');
  for (const execution of running) execution.abort();
  await Promise.allSettled(running.map((execution) => execution.settled));
  await Promise.allSettled([...em.deliveries]);
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export const startStepFunctions = async (options: StepFunctionsOptions): Promise<LocalStepFunctions> => {
  const machines = machinesOf(options.definitionOptions);
  const em: Emulator = {
    options,
    machines,
    stateMachines: new Map([...machines].map(([arn, machine]) => [arn, stateMachineOf(machine.definition)])),
    executions: new Map(),
    browserConcurrency: options.browserConcurrency ?? BROWSER_CONCURRENCY,
    browsersInUse: new Map(),
    deliveries: new Set(),
    closing: false,
  };
  const server = createServer((req, res) => handle(em, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://${options.host ?? '127.0.0.1'}:${port}`;
  const arnOf = (key: StateMachineKey) => [...machines.values()].find((machine) => machine.key === key)!.arn;
  const stateMachineArns = {
    viewOnPage: arnOf('viewOnPage'),
    checkAuthStatus: arnOf('checkAuthStatus'),
    submitToPayer: arnOf('submitToPayer'),
  };
  return {
    endpoint,
    stateMachineArns,
    env: {
      AWS_ENDPOINT_URL_SFN: endpoint,
      VIEW_ON_PAGE_STATE_MACHINE_ARN: stateMachineArns.viewOnPage,
      CHECK_AUTH_STATUS_STATE_MACHINE_ARN: stateMachineArns.checkAuthStatus,
      SUBMIT_TO_PAYER_STATE_MACHINE_ARN: stateMachineArns.submitToPayer,
    },
    close: () => close(em, server),
  };
};
