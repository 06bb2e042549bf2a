import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import {
  GATEWAY_LIMITS,
  type GatewayProblem,
  gatewayResponses,
  isBinaryMediaType,
  problemBody,
} from '#lib/http/gateway';
import { baseHeaders } from '#lib/http/response';
import type { Route } from '#lib/routes';
import { type ClientLimits, DEFAULT_LOCAL_LIMITS, dailyQuotas, tokenBuckets } from './throttle.ts';

/**
 * A local API Gateway (REST, payload v1): matches the route table, runs the REQUEST authorizer,
 * builds the same proxy event AWS sends, invokes the route's handler and enforces the gateway's
 * and Lambda's size limits. Only what a client can observe is imitated; nothing here is imported
 * by functions/ or lib/.
 */
type LambdaHandler<E, R> = (event: E, context: Context) => Promise<R>;
export type HandlerLoader = (module: string) => Promise<LambdaHandler<unknown, unknown>>;

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
  staticSegments: number;
}

const compile = (route: Route): CompiledRoute => {
  const names: string[] = [];
  const segments = route.path.split('/').slice(1);
  const source = segments
    .map((segment) => {
      const variable = /^\{(\w+)\}$/.exec(segment);
      if (!variable) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(variable[1]!);
      return '([^/]+)';
    })
    .join('/');
  return { route, pattern: new RegExp(`^/${source}/?$`), names, staticSegments: segments.length - names.length };
};

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

const readBody = (req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** A prototype-free map: client-chosen names (`__proto__`, `constructor`) stay data, never Object.prototype's. */
const dictionary = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

/**
 * The request target, or undefined when API Gateway would refuse it. API Gateway answers 400 to a
 * path or query string whose percent-encoding is malformed (`%ZZ`, a lone `%`) before authorizing
 * or routing, where most web servers pass it on; invalid UTF-8 (overlong `%C0%AF`, surrogate
 * `%ED%A0%80`) is refused alike rather than guessed at. decodeURIComponent is that strict decoder,
 * and an escape never spans a `/`, `&` or `=`, so decoding the whole path and the whole query
 * checks every segment, name and value.
 */
const requestTarget = (raw = '/'): URL | undefined => {
  try {
    // Origin-form is taken verbatim ("//x" is a path, not a host); absolute-form is parsed as a URL.
    const url = raw.startsWith('/') ? new URL(`http://localhost${raw}`) : new URL(raw);
    decodeURIComponent(url.pathname);
    decodeURIComponent(url.search);
    return url;
  } catch {
    return undefined;
  }
};

/** API Gateway's pair of maps: the last value of each name, and every value in order. */
const collect = (pairs: Iterable<[string, string]>) => {
  const last = dictionary<string>();
  const all = dictionary<string[]>();
  for (const [name, value] of pairs) {
    last[name] = value;
    const values = all[name] ?? [];
    values.push(value);
    all[name] = values;
  }
  return { last, all };
};

function* headerPairs(rawHeaders: string[]): Generator<[string, string]> {
  for (let i = 0; i < rawHeaders.length; i += 2) yield [rawHeaders[i]!, rawHeaders[i + 1]!];
}

/**
 * Lambda hands a function its event as parsed JSON; the same round trip gives local handlers what
 * AWS gives them (plain objects in which a `__proto__` header is an own property).
 */
const asDelivered = <T>(serialized: string): T => JSON.parse(serialized) as T;

/**
 * A proxy result's headers as API Gateway (REST) sends them: a name in both `headers` and
 * `multiValueHeaders` gets every value of the latter, plus the former's unless it is among them
 * (several Set-Cookie lines need multiValueHeaders). Names match whatever their case.
 */
export const responseHeaders = (result: Pick<APIGatewayProxyResult, 'headers' | 'multiValueHeaders'>) => {
  const merged = new Map<string, { name: string; values: string[] }>();
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    merged.set(name.toLowerCase(), { name, values: values.map(String) });
  }
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    const entry = merged.get(name.toLowerCase());
    if (!entry) merged.set(name.toLowerCase(), { name, values: [String(value)] });
    else if (!entry.values.includes(String(value))) entry.values.push(String(value));
  }
  return [...merged.values()];
};

const send = (res: ServerResponse, result: APIGatewayProxyResult, requestId: string) => {
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  res.statusCode = result.statusCode;
  for (const { name, values } of responseHeaders(result))
    res.setHeader(name, values.length === 1 ? values[0]! : values);
  res.setHeader('x-amzn-RequestId', requestId);
  res.setHeader('Content-Length', body.length);
  res.end(body);
};

export interface GatewayOptions {
  routes: readonly Route[];
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

/** LOCAL_AUTHORIZER_CACHE_TTL: whole seconds, 0 to 3600 as API Gateway allows; the deployed value when unset. */
export const authorizerCacheTtlFromEnv = (env: NodeJS.ProcessEnv = process.env): number => {
  const raw = env.LOCAL_AUTHORIZER_CACHE_TTL;
  if (raw === undefined || raw.trim() === '') return GATEWAY_LIMITS.authorizerCacheTtlSeconds;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 3600) {
    throw new Error(`LOCAL_AUTHORIZER_CACHE_TTL must be whole seconds from 0 to 3600, not ${raw}.`);
  }
  return value;
};

/**
 * API Gateway's authorizer cache: an Allow or Deny answer is kept per identity source (the x-api-key
 * value) for `ttlSeconds`; a refusal (401) or a failure is not kept, so the next request asks again.
 */
const authorizerCache = (ttlSeconds: number, now: () => number = Date.now) => {
  const answers = new Map<string, { result: APIGatewayAuthorizerResult; until: number }>();
  return {
    get(apiKey: string): APIGatewayAuthorizerResult | undefined {
      const cached = answers.get(apiKey);
      if (cached && cached.until > now()) return cached.result;
      if (cached) answers.delete(apiKey);
      return undefined;
    },
    set(apiKey: string, result: APIGatewayAuthorizerResult) {
      if (ttlSeconds <= 0) return;
      // Only keys the authorizer accepted are kept, so the map is bounded by the keys in use; expired ones go here.
      const time = now();
      for (const [key, entry] of answers) if (entry.until <= time) answers.delete(key);
      answers.set(apiKey, { result, until: time + ttlSeconds * 1000 });
    },
  };
};

export const createGateway = ({
  routes,
  loadHandler,
  stage = 'local',
  defaultLimits = DEFAULT_LOCAL_LIMITS,
  clientLimits = async () => undefined,
  authorizerCacheTtlSeconds = authorizerCacheTtlFromEnv(),
}: GatewayOptions): Server => {
  // API Gateway prefers the most specific resource: static segments win over variables.
  const compiled = routes.map(compile).sort((a, b) => b.staticSegments - a.staticSegments);
  const buckets = tokenBuckets();
  const quotas = dailyQuotas();
  const authorizations = authorizerCache(authorizerCacheTtlSeconds);
  /**
   * As a usage plan does after the authorizer: one bucket per client, then its daily quota (only what
   * the bucket admits counts); 429 with Retry-After when either refuses.
   */
  const throttle = async (clientId: string): Promise<APIGatewayProxyResult | undefined> => {
    const limits = { ...defaultLimits, ...(await clientLimits(clientId)) };
    const throttled = buckets.take(clientId, limits);
    const admission = throttled.admitted ? quotas.take(clientId, limits.quotaPerDay) : throttled;
    if (admission.admitted) return undefined;
    const refused = throttled.admitted ? gatewayResponses.quotaExceeded() : gatewayResponses.throttled();
    return { ...refused, headers: { ...refused.headers, 'Retry-After': String(admission.retryAfterSeconds) } };
  };

  const server = createServer(async (req, res) => {
    const requestId = randomUUID();
    try {
      const url = requestTarget(req.url);
      const method = (req.method ?? 'GET').toUpperCase();
      const match =
        url &&
        compiled
          .map((candidate) => ({ candidate, found: candidate.pattern.exec(url.pathname) }))
          .find(({ candidate, found }) => found && candidate.route.method === method);
      // Drain the body before answering, so a client mid-upload sees the response, not a reset.
      const body = await readBody(req, GATEWAY_LIMITS.maxPayloadBytes);
      if (!url) return send(res, gatewayResponses.badRequest(), requestId);
      if (!match?.found) return send(res, gatewayResponses.notFound(), requestId);
      if (body === 'too-large') return send(res, gatewayResponses.payloadTooLarge(), requestId);

      const { route } = match.candidate;
      const { last: headers, all: multiValueHeaders } = collect(headerPairs(req.rawHeaders));
      const { last: query, all: multiQuery } = collect(url.searchParams);
      const pathParameters = dictionary<string>();
      match.candidate.names.forEach((name, i) => {
        pathParameters[name] = decodeURIComponent(match.found![i + 1]!);
      });
      // API Gateway tells the function how the client connected.
      headers['X-Forwarded-Proto'] = 'http';
      multiValueHeaders['X-Forwarded-Proto'] = ['http'];
      const methodArn = `arn:aws:execute-api:us-east-1:000000000000:local/${stage}/${method}${url.pathname}`;

      const authorizer = (await loadHandler('authorizer')) as LambdaHandler<
        APIGatewayRequestAuthorizerEvent,
        APIGatewayAuthorizerResult
      >;
      const authorizerEvent: APIGatewayRequestAuthorizerEvent = {
        type: 'REQUEST',
        methodArn,
        resource: route.path,
        path: url.pathname,
        httpMethod: method,
        headers,
        multiValueHeaders,
        pathParameters,
        queryStringParameters: query,
        multiValueQueryStringParameters: multiQuery,
        stageVariables: {},
        requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
      };
      // The identity source: without it API Gateway answers 401 itself; the authorizer does the same here.
      const apiKey = headers[Object.keys(headers).find((h) => h.toLowerCase() === 'x-api-key') ?? ''];
      let authorization: APIGatewayAuthorizerResult | undefined;
      try {
        // A route that authenticates its callers itself (the scraper session's token) skips the authorizer.
        if (!route.auth) {
          authorization = apiKey ? authorizations.get(apiKey) : undefined;
          if (!authorization) {
            authorization = await authorizer(asDelivered(JSON.stringify(authorizerEvent)), lambdaContext('Authorizer'));
            if (apiKey) authorizations.set(apiKey, authorization);
          }
        }
      } catch (error) {
        if ((error as Error).message === 'Unauthorized') return send(res, gatewayResponses.unauthorized(), requestId);
        process.stderr.write(`local gateway: the authorizer failed: ${(error as Error).name}\n`);
        return send(res, gatewayResponses.authorizerFailure(), requestId);
      }
      if (authorization?.policyDocument.Statement.some((s) => s.Effect === 'Deny')) {
        return send(res, gatewayResponses.accessDenied(), requestId);
      }
      const clientId = authorization?.context?.clientId;
      const throttled = typeof clientId === 'string' ? await throttle(clientId) : undefined;
      if (throttled) return send(res, throttled, requestId);

      const contentType = headers[Object.keys(headers).find((h) => h.toLowerCase() === 'content-type') ?? ''];
      const binary = body.length > 0 && isBinaryMediaType(contentType);
      const now = new Date();
      const event: APIGatewayProxyEvent = {
        resource: route.path,
        path: url.pathname,
        httpMethod: method,
        headers,
        multiValueHeaders,
        queryStringParameters: Object.keys(query).length ? query : null,
        multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
        pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
        stageVariables: null,
        body: body.length === 0 ? null : binary ? body.toString('base64') : body.toString('utf8'),
        isBase64Encoded: binary,
        requestContext: {
          accountId: '000000000000',
          apiId: 'local',
          authorizer: authorization
            ? Object.assign(dictionary<unknown>(), authorization.context, { principalId: authorization.principalId })
            : undefined,
          httpMethod: method,
          identity: {
            sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          } as APIGatewayProxyEvent['requestContext']['identity'],
          // The path as the client sent it (on AWS it starts with the stage; this gateway serves none), and the
          // host it was sent to: handlers build absolute URLs from them.
          path: url.pathname,
          domainName: req.headers.host,
          protocol: `HTTP/${req.httpVersion}`,
          requestId,
          requestTime: now.toUTCString(),
          requestTimeEpoch: now.getTime(),
          resourceId: 'local',
          resourcePath: route.path,
          stage,
        },
      };
      const serialized = JSON.stringify(event);
      // Lambda refuses a synchronous event of 6 MiB or more, and API Gateway answers 413 for it.
      if (Buffer.byteLength(serialized) >= GATEWAY_LIMITS.maxLambdaRequestBytes) {
        return send(res, gatewayResponses.payloadTooLarge(), requestId);
      }
      const handler = (await loadHandler(route.handler)) as LambdaHandler<APIGatewayProxyEvent, APIGatewayProxyResult>;
      const result = await handler(asDelivered(serialized), lambdaContext(route.handler));
      if (Buffer.byteLength(JSON.stringify(result)) > GATEWAY_LIMITS.maxLambdaResponseBytes) {
        return send(res, gatewayResponses.badGateway(), requestId);
      }
      return send(res, result, requestId);
    } catch (error) {
      // Name and frames only: an error message can quote request data.
      const frames = (error as Error).stack?.split('\n').slice(1, 6).join('\n') ?? '';
      process.stderr.write(`local gateway: the handler failed: ${(error as Error).name}\n${frames}\n`);
      return send(res, gatewayResponses.badGateway(), requestId);
    }
  });
  // What Node's HTTP parser refuses before a request exists (headers over its 16 KiB, a malformed request
  // line) and Expect values other than 100-continue would otherwise get Node's bare answers; the edge of a
  // deployed API has its own, so these are the local stand-in's, in the same problem-details shape.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    const problem = error.code === 'HPE_HEADER_OVERFLOW' ? REQUEST_HEADERS_TOO_LARGE : MALFORMED_REQUEST;
    const body = JSON.stringify(problemBody(problem));
    const headers = { ...baseHeaders, 'Content-Type': 'application/problem+json; charset=utf-8' };
    socket.end(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
        Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('') +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  server.on('checkExpectation', (_req, res: ServerResponse) => {
    send(
      res,
      {
        statusCode: EXPECTATION_FAILED.status,
        headers: { ...baseHeaders, 'Content-Type': 'application/problem+json; charset=utf-8' },
        body: JSON.stringify(problemBody(EXPECTATION_FAILED)),
      },
      randomUUID(),
    );
  });
  return server;
};

const REQUEST_HEADERS_TOO_LARGE: GatewayProblem = {
  type: 'DEFAULT_4XX',
  status: 431,
  title: 'Request Header Fields Too Large',
  detail: 'The request line and headers exceed the 16 KiB the gateway reads.',
};
const MALFORMED_REQUEST: GatewayProblem = {
  type: 'DEFAULT_4XX',
  status: 400,
  title: 'Bad Request',
  detail: 'The request is not well-formed HTTP.',
};
const EXPECTATION_FAILED: GatewayProblem = {
  type: 'DEFAULT_4XX',
  status: 417,
  title: 'Expectation Failed',
  detail: 'Only Expect: 100-continue is supported.',
};
