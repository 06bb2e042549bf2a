import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'aws-lambda';
import type { InvokedFunction } from '#lib/routes/automation-tasks';
import { functionArnOf } from './arns.ts';
import { type HandlerLoader, lambdaContext } from './gateway/invoke.ts';

/**
 * A local AWS Lambda on loopback for the functions other functions invoke (`invokedFunctions` of
 * lib/routes/automation-tasks.ts): the Invoke REST API (`POST /2015-03-31/functions/{name}/invocations`,
 * RequestResponse), so the browser workers call the run credentials function through the real
 * @aws-sdk/client-lambda as on AWS (AWS_ENDPOINT_URL_LAMBDA). Each invocation runs the same handler
 * module in this process, as Lambda would: a JSON copy of the payload, a Lambda context with the
 * function's deadline, its JSON result as the answer; a thrown error (or the deadline passed) is
 * Lambda's 200 with `X-Amz-Function-Error: Unhandled` and `{errorType, errorMessage}` (no stack
 * trace: the answer goes back to the caller). Nothing here is imported by functions/ or lib/.
 */
const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** Lambda's bound on a synchronous invocation's payload (request and response). */
const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
/** A function name, a partial ARN (`<account>:function:<name>`) or a full ARN, with an optional qualifier. */
const FUNCTION_NAME =
  /^(?:(?:arn:aws:lambda:[a-z0-9-]+:)?\d{12}:function:)?([A-Za-z0-9_-]{1,64})(?::(\$LATEST|[A-Za-z0-9_-]{1,128}))?$/;

/** An error of the service itself (not the function's), as Lambda's REST API reports it. */
class ServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface LambdaOptions {
  /** The functions served, by name; each runs its `handler` module. */
  functions: readonly InvokedFunction[];
  loadHandler: HandlerLoader;
  port?: number;
  host?: string;
}

export interface LocalLambda {
  endpoint: string;
  /** What the invoking functions need: the SDK's endpoint variable and each function's name variable. */
  env: Record<string, string>;
  /** Waits for invocations in flight, then stops listening. */
  close(): Promise<void>;
}

/** The function an Invoke names (name or ARN, `$LATEST` the only version), or ResourceNotFoundException. */
const functionNamed = (functions: readonly InvokedFunction[], encoded: string) => {
  const match = FUNCTION_NAME.exec(decodeURIComponent(encoded));
  const fn = match && (!match[2] || match[2] === '$LATEST') ? functions.find((f) => f.name === match[1]) : undefined;
  if (!fn)
    throw new ServiceError('ResourceNotFoundException', `Function not found: ${functionArnOf(match?.[1] ?? '')}`, 404);
  return fn;
};

/** The request's body, refused past Lambda's payload bound. */
const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_PAYLOAD_BYTES) {
      throw new ServiceError('RequestTooLargeException', 'Request must be smaller than 6291456 bytes', 413);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
};

/** Runs the handler with a deadline: its result, or the function error Lambda would report. */
const invoke = async (loadHandler: HandlerLoader, fn: InvokedFunction, event: unknown) => {
  let handler: Awaited<ReturnType<HandlerLoader>>;
  try {
    handler = await loadHandler(fn.handler);
  } catch (error) {
    const errorMessage = `Cannot load functions/${fn.handler}: ${(error as Error).name}`;
    return { failure: { errorType: 'Runtime.ImportModuleError', errorMessage } };
  }
  const deadline = Date.now() + fn.timeoutSeconds * 1000;
  const context: Context = {
    ...lambdaContext(fn.name),
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`);
      error.name = 'Sandbox.Timedout';
      reject(error);
    }, fn.timeoutSeconds * 1000);
  });
  try {
    return { result: await Promise.race([handler(event, context), timedOut]) };
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    return { failure: { errorType: name, errorMessage: message } };
  } finally {
    clearTimeout(timer);
  }
};

export const startLambda = async (options: LambdaOptions): Promise<LocalLambda> => {
  const inFlight = new Set<Promise<unknown>>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, {
        'Content-Type': 'application/json',
        'Content-Length': String(Buffer.byteLength(body)),
        'x-amzn-RequestId': randomUUID(),
        ...headers,
      });
      res.end(body);
    };
    try {
      const path = INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://localhost').pathname);
      if (req.method !== 'POST' || !path) {
        throw new ServiceError('UnknownOperationException', `Unknown operation: ${req.method} ${req.url}`, 404);
      }
      const fn = functionNamed(options.functions, path[1]!);
      const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
      if (type !== 'RequestResponse') {
        throw new ServiceError(
          'InvalidParameterValueException',
          `Only RequestResponse is served locally, not ${type}`,
          400,
        );
      }
      const text = await bodyOf(req);
      let event: unknown;
      try {
        event = text === '' ? {} : JSON.parse(text);
      } catch {
        throw new ServiceError('InvalidRequestContentException', 'Could not parse request body into json', 400);
      }
      const { result, failure } = await invoke(options.loadHandler, fn, event);
      const headers = { 'X-Amz-Executed-Version': '$LATEST' };
      if (failure) return reply(200, JSON.stringify(failure), { ...headers, 'X-Amz-Function-Error': 'Unhandled' });
      // A handler that returns nothing answers `null`, as Lambda does.
      return reply(200, JSON.stringify(result ?? null), headers);
    } catch (error) {
      if (error instanceof ServiceError) {
        return reply(error.status, JSON.stringify({ Type: 'User', message: error.message }), {
          'x-amzn-ErrorType': error.type,
        });
      }
      process.stderr.write(`local lambda: ${(error as Error).name}\n`);
      return reply(500, JSON.stringify({ Type: 'Service', message: 'Internal failure' }), {
        'x-amzn-ErrorType': 'ServiceException',
      });
    }
  };

  const server = createServer((req, res) => {
    const handled = handle(req, res).finally(() => inFlight.delete(handled));
    inFlight.add(handled);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://${options.host ?? '127.0.0.1'}:${port}`;
  return {
    endpoint,
    env: {
      AWS_ENDPOINT_URL_LAMBDA: endpoint,
      ...Object.fromEntries(options.functions.map((fn) => [fn.environment, fn.name])),
    },
    close: async () => {
      await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
