import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
} from 'aws-lambda';
import { GATEWAY_LIMITS, gatewayResponses } from '#lib/http/gateway-responses';
import type { RouteRow } from '#lib/routes/route-table';
import { localEnvironment } from './config.ts';
import { type AuthorizerCache, authorizerCache, authorizerCacheTtlFromEnv } from './gateway/authorizer-cache.ts';
import { asDelivered, type HandlerLoader, type LambdaHandler, lambdaContext } from './gateway/invoke.ts';
import { authorizerEventOf, type MatchedRequest, matchedRequest, proxyEventOf } from './gateway/proxy-event.ts';
import { type CompiledRoute, compile, headerOf, readBody, requestTarget } from './gateway/request.ts';
import { answerEdgeRefusals, send } from './gateway/responses.ts';
import { type ClientLimits, DEFAULT_LOCAL_LIMITS, dailyQuotas, tokenBuckets } from './throttle.ts';

/**
 * A local API Gateway (REST, payload v1): matches the route table, runs the REQUEST authorizer,
 * builds the same proxy event AWS sends, invokes the route's handler and enforces the gateway's
 * and Lambda's size limits. Only what a client can observe is imitated; nothing here is imported
 * by functions/ or lib/.
 */

export interface GatewayOptions {
  routes: readonly RouteRow[];
  loadHandler: HandlerLoader;
  stage?: string;
  /** Requests per second, burst and daily quota of a client without its own (throttle.ts). */
  defaultLimits?: ClientLimits;
  /** A client's own limits, stored on its Client item; undefined fields fall back to the defaults. */
  clientLimits?: (clientId: string) => Promise<Partial<ClientLimits> | undefined>;
  /**
   * Seconds an authorizer's answer is reused for the same x-api-key value, as API Gateway's
   * resultsCacheTtl; 0 asks the authorizer on every request. Default: LOCAL_AUTHORIZER_CACHE_TTL,
   * else the deployed API's value.
   */
  authorizerCacheTtlSeconds?: number;
}

/** The gateway's state: its routes, most specific first, its throttles and its authorizer cache. */
interface Gateway {
  compiled: CompiledRoute[];
  loadHandler: HandlerLoader;
  stage: string;
  defaultLimits: ClientLimits;
  clientLimits: (clientId: string) => Promise<Partial<ClientLimits> | undefined>;
  buckets: ReturnType<typeof tokenBuckets>;
  quotas: ReturnType<typeof dailyQuotas>;
  authorizations: AuthorizerCache;
}

/**
 * As a usage plan does after the authorizer: one bucket per client, then its daily quota (only what
 * the bucket admits counts); 429 with Retry-After when either refuses.
 */
async function throttle(gw: Gateway, clientId: string): Promise<APIGatewayProxyResult | undefined> {
  const limits = { ...gw.defaultLimits, ...(await gw.clientLimits(clientId)) };
  const throttled = gw.buckets.take(clientId, limits);
  const admission = throttled.admitted ? gw.quotas.take(clientId, limits.quotaPerDay) : throttled;
  if (admission.admitted) return undefined;
  const refused = throttled.admitted ? gatewayResponses.quotaExceeded() : gatewayResponses.throttled();
  return { ...refused, headers: { ...refused.headers, 'Retry-After': String(admission.retryAfterSeconds) } };
}

/**
 * The authorizer's answer (cached per x-api-key value), or the gateway's refusal: 401, 500 when the
 * authorizer fails, 403 for a Deny, 429 when the client's throttle refuses.
 */
async function authorize(
  gw: Gateway,
  m: MatchedRequest,
): Promise<{ authorization: APIGatewayAuthorizerResult | undefined } | { refusal: APIGatewayProxyResult }> {
  const authorizer = (await gw.loadHandler('authorizer')) as LambdaHandler<
    APIGatewayRequestAuthorizerEvent,
    APIGatewayAuthorizerResult
  >;
  const authorizerEvent = authorizerEventOf(m);
  // The identity source: without it API Gateway answers 401 itself; the authorizer does the same here.
  const apiKey = headerOf(m.headers, 'x-api-key');
  let authorization: APIGatewayAuthorizerResult | undefined;
  try {
    // A route that authenticates its callers itself (the scraper session's token) skips the authorizer.
    if (!m.route.auth) {
      authorization = apiKey ? gw.authorizations.get(apiKey) : undefined;
      if (!authorization) {
        authorization = await authorizer(asDelivered(JSON.stringify(authorizerEvent)), lambdaContext('Authorizer'));
        if (apiKey) gw.authorizations.set(apiKey, authorization);
      }
    }
  } catch (error) {
    if ((error as Error).message === 'Unauthorized') return { refusal: gatewayResponses.unauthorized() };
    process.stderr.write(`local gateway: the authorizer failed: ${(error as Error).name}\n`);
    return { refusal: gatewayResponses.authorizerFailure() };
  }
  if (authorization?.policyDocument.Statement.some((s) => s.Effect === 'Deny')) {
    return { refusal: gatewayResponses.accessDenied() };
  }
  const clientId = authorization?.context?.clientId;
  const throttled = typeof clientId === 'string' ? await throttle(gw, clientId) : undefined;
  return throttled ? { refusal: throttled } : { authorization };
}

/** The route's handler, invoked with the proxy event within Lambda's request and response limits. */
async function invoke(gw: Gateway, route: RouteRow, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const serialized = JSON.stringify(event);
  // Lambda refuses a synchronous event of 6 MiB or more, and API Gateway answers 413 for it.
  if (Buffer.byteLength(serialized) >= GATEWAY_LIMITS.maxLambdaRequestBytes) return gatewayResponses.payloadTooLarge();
  const handler = (await gw.loadHandler(route.handler)) as LambdaHandler<APIGatewayProxyEvent, APIGatewayProxyResult>;
  const result = await handler(asDelivered(serialized), lambdaContext(route.handler));
  if (Buffer.byteLength(JSON.stringify(result)) > GATEWAY_LIMITS.maxLambdaResponseBytes) {
    return gatewayResponses.badGateway();
  }
  return result;
}

/** One request, end to end: route, size, authorizer, throttle, handler. */
async function serve(gw: Gateway, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = randomUUID();
  try {
    const url = requestTarget(req.url);
    const method = (req.method ?? 'GET').toUpperCase();
    const match =
      url &&
      gw.compiled
        .map((candidate) => ({ candidate, found: candidate.pattern.exec(url.pathname) }))
        .find(({ candidate, found }) => found && candidate.route.method === method);
    // Drain the body before answering, so a client mid-upload sees the response, not a reset.
    const body = await readBody(req, GATEWAY_LIMITS.maxPayloadBytes);
    if (!url) return send(res, gatewayResponses.badRequest(), requestId);
    if (!match?.found) return send(res, gatewayResponses.notFound(), requestId);
    if (body === 'too-large') return send(res, gatewayResponses.payloadTooLarge(), requestId);
    const { route, names } = match.candidate;
    const m = matchedRequest(req, route, url, method, gw.stage, { names, found: match.found });
    const authorized = await authorize(gw, m);
    if ('refusal' in authorized) return send(res, authorized.refusal, requestId);
    return send(res, await invoke(gw, route, proxyEventOf(m, body, authorized.authorization, requestId)), requestId);
  } catch (error) {
    // Name and frames only: an error message can quote request data.
    const frames = (error as Error).stack?.split('\n').slice(1, 6).join('\n') ?? '';
    process.stderr.write(`local gateway: the handler failed: ${(error as Error).name}\n${frames}\n`);
    return send(res, gatewayResponses.badGateway(), requestId);
  }
}

export const createGateway = ({
  routes,
  loadHandler,
  stage = 'local',
  defaultLimits = DEFAULT_LOCAL_LIMITS,
  clientLimits = async () => undefined,
  authorizerCacheTtlSeconds = authorizerCacheTtlFromEnv(localEnvironment()),
}: GatewayOptions): Server => {
  const gw: Gateway = {
    // API Gateway prefers the most specific resource: static segments win over variables.
    compiled: routes.map(compile).sort((a, b) => b.staticSegments - a.staticSegments),
    loadHandler,
    stage,
    defaultLimits,
    clientLimits,
    buckets: tokenBuckets(),
    quotas: dailyQuotas(),
    authorizations: authorizerCache(authorizerCacheTtlSeconds),
  };
  const server = createServer((req, res) => serve(gw, req, res));
  answerEdgeRefusals(server);
  return server;
};
