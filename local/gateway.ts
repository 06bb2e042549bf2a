import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { GATEWAY_LIMITS, gatewayResponses, isBinaryMediaType } from '#lib/http/gateway';
import type { Route } from '#lib/routes';

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

const send = (res: ServerResponse, result: APIGatewayProxyResult, requestId: string) => {
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  res.statusCode = result.statusCode;
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) res.setHeader(name, values.map(String));
  res.setHeader('x-amzn-RequestId', requestId);
  res.setHeader('Content-Length', body.length);
  res.end(body);
};

export interface GatewayOptions {
  routes: readonly Route[];
  loadHandler: HandlerLoader;
  stage?: string;
}

export const createGateway = ({ routes, loadHandler, stage = 'local' }: GatewayOptions): Server => {
  // API Gateway prefers the most specific resource: static segments win over variables.
  const compiled = routes.map(compile).sort((a, b) => b.staticSegments - a.staticSegments);

  return createServer(async (req, res) => {
    const requestId = randomUUID();
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const method = (req.method ?? 'GET').toUpperCase();
      const match = compiled
        .map((candidate) => ({ candidate, found: candidate.pattern.exec(url.pathname) }))
        .find(({ candidate, found }) => found && candidate.route.method === method);
      // Drain the body before answering, so a client mid-upload sees the response, not a reset.
      const body = await readBody(req, GATEWAY_LIMITS.maxPayloadBytes);
      if (!match?.found) return send(res, gatewayResponses.notFound(), requestId);
      if (body === 'too-large') return send(res, gatewayResponses.payloadTooLarge(), requestId);

      const { route } = match.candidate;
      const headers: Record<string, string> = {};
      const multiValueHeaders: Record<string, string[]> = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]!;
        const value = req.rawHeaders[i + 1]!;
        headers[name] = value;
        multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), value];
      }
      // API Gateway tells the function how the client connected.
      headers['X-Forwarded-Proto'] = 'http';
      multiValueHeaders['X-Forwarded-Proto'] = ['http'];
      const query: Record<string, string> = {};
      const multiQuery: Record<string, string[]> = {};
      for (const [name, value] of url.searchParams) {
        query[name] = value;
        multiQuery[name] = [...(multiQuery[name] ?? []), value];
      }
      const pathParameters = Object.fromEntries(
        match.candidate.names.map((name, i) => [name, decodeURIComponent(match.found![i + 1]!)]),
      );
      const methodArn = `arn:aws:execute-api:us-east-1:000000000000:local/${stage}/${method}${url.pathname}`;

      const authorizer = (await loadHandler('authorizer')) as LambdaHandler<
        APIGatewayRequestAuthorizerEvent,
        APIGatewayAuthorizerResult
      >;
      let authorization: APIGatewayAuthorizerResult | undefined;
      try {
        // A route that authenticates its callers itself (the scraper session's token) skips the authorizer.
        authorization = route.auth
          ? undefined
          : await authorizer(
              {
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
              },
              lambdaContext('Authorizer'),
            );
      } catch (error) {
        if ((error as Error).message === 'Unauthorized') return send(res, gatewayResponses.unauthorized(), requestId);
        process.stderr.write(`local gateway: the authorizer failed: ${(error as Error).name}\n`);
        return send(res, gatewayResponses.authorizerFailure(), requestId);
      }
      if (authorization?.policyDocument.Statement.some((s) => s.Effect === 'Deny')) {
        return send(res, gatewayResponses.accessDenied(), requestId);
      }

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
          authorizer: authorization && { ...authorization.context, principalId: authorization.principalId },
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
      // Lambda refuses a synchronous event of 6 MiB or more, and API Gateway answers 413 for it.
      if (Buffer.byteLength(JSON.stringify(event)) >= GATEWAY_LIMITS.maxLambdaRequestBytes) {
        return send(res, gatewayResponses.payloadTooLarge(), requestId);
      }
      const handler = (await loadHandler(route.handler)) as LambdaHandler<APIGatewayProxyEvent, APIGatewayProxyResult>;
      const result = await handler(event, lambdaContext(route.handler));
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
};
