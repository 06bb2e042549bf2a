import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/* How the local stack invokes a handler as Lambda would: its context, and its event as delivered. */

export type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;
export type HandlerLoader = (module: string) => Promise<LambdaHandler<unknown, unknown>>;

export const lambdaContext = (functionName: string): Context => {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};

/**
 * Lambda hands a function its event as parsed JSON; the same round trip gives local handlers what
 * AWS gives them (plain objects in which a `__proto__` header is an own property).
 */
export const asDelivered = <T>(serialized: string): T => JSON.parse(serialized) as T;
