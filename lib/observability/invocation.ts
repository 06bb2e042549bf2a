import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy, { type MiddlewareObj, type Request } from '@middy/core';
import { checkSettings } from '#lib/config/settings';
import { functionNameOf, type Route } from '#lib/routes/route-table';
import { log, logger } from './logger.ts';
import { recordRequest } from './metrics.ts';

/*
 * What every invocation adds to the logs and metrics: Powertools' Lambda context (function, its
 * request id, cold start); the API Gateway request id, the client and the route's name from the
 * route table (lib/routes/route-table.ts functionNameOf: the CDK function's id, e.g. `CreateRequest`); and, for
 * API calls, one EMF line per call (requests, 4xx, 5xx, latency) once the response is final. The
 * keys are reset when the invocation ends, so nothing of one invocation leaks into the next.
 */

// The fields of an API Gateway event read here, and Lambda's context as Middy hands it on: this
// layer sits below the edge (lib/http) and names no event type of its own (docs/architecture.md).
interface RoutedEvent {
  httpMethod: string;
  resource: string;
  requestContext?: { requestId?: string; authorizer?: Record<string, unknown> | null };
}
type Context = Request['context'];
type ApiRequest = Request<RoutedEvent, unknown>;
type RouteOf = (event: Pick<RoutedEvent, 'httpMethod' | 'resource'>) => Route | undefined;

// Every function loads this module: its cold start fails here, naming each variable set to what it may
// not be (lib/config/settings.ts), rather than a request later.
checkSettings();

const startedAt = new WeakMap<object, number>();
const stringOr = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The route's name, or the Lambda function's for a handler invoked outside the gateway. */
const routeNameOf = (request: ApiRequest, routeOf: RouteOf) => {
  const route = request.event && routeOf(request.event);
  return route ? functionNameOf(route) : (request.context?.functionName ?? 'unknown');
};

/**
 * endpoint()'s observability (lib/http/endpoint.ts): `middlewares` go first in its stack (their
 * `before` runs before any other), `requestEnd` wraps its requestEnd hook (the audit trail), which
 * runs once per invocation after everything, replays and problem details included. The keys are
 * reset there rather than by the middleware's `resetKeys` (in its `after`), so that the audit
 * trail's own log lines still carry them.
 */
export const observeRequests = (routeOf: RouteOf) => ({
  middlewares: [
    injectLambdaContext(logger),
    {
      before: (request) => {
        startedAt.set(request, performance.now());
        const { requestContext } = request.event;
        logger.appendKeys({
          requestId: stringOr(requestContext?.requestId),
          clientId: stringOr(requestContext?.authorizer?.clientId),
          keyId: stringOr(requestContext?.authorizer?.keyId),
          route: routeNameOf(request, routeOf),
        });
      },
    } satisfies MiddlewareObj<ApiRequest['event'], unknown>,
  ] as MiddlewareObj[],
  requestEnd:
    (next: (request: Request) => Promise<void>) =>
    async (request: Request): Promise<void> => {
      const started = startedAt.get(request);
      try {
        await next(request);
      } finally {
        const outcome = {
          route: routeNameOf(request as ApiRequest, routeOf),
          status: (request.response as { statusCode?: number } | undefined)?.statusCode,
          latencyMs: started === undefined ? 0 : Math.round(performance.now() - started),
        };
        recordRequest(outcome);
        log.debug('Request handled', { status: outcome.status, latencyMs: outcome.latencyMs });
        logger.resetKeys();
      }
    },
});

/**
 * A function outside the API (the authorizer, the S3 verifier, the automation tasks), in Middy with
 * the logger's context and its name from the route table (`EventFunction.name`,
 * `AutomationTask.name`, `Authorizer`) as its `route`.
 */
export const observed = <TEvent, TResult>(
  name: string,
  handler: (event: TEvent, context: Context) => Promise<TResult>,
): ((event: TEvent, context?: Context) => Promise<TResult>) => {
  // No early timeout: Middy would fail the invocation as `TimeoutError` just before the deadline, and
  // a task's timeout must reach Step Functions as its own (States.Timeout: `portal_timeout`, retried).
  const wrapped = middy<TEvent, TResult>(handler, { timeoutEarlyInMillis: 0 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use({ before: () => logger.appendKeys({ route: name }) });
  // Lambda always passes a context; tests and scripts may not, and Middy then makes an empty one.
  return (event, context) => wrapped(event, context as Context);
};
