import type { IncomingMessage } from 'node:http';
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { isBinaryMediaType } from '#lib/http/gateway-responses';
import type { RouteRow } from '#lib/routes/route-table';
import { collect, dictionary, headerOf, headerPairs } from './request.ts';

/* The events API Gateway (REST, payload v1) builds from a request: the authorizer's, then the proxy's. */

/** What both events are built from: the matched request, its maps as API Gateway collects them. */
export interface MatchedRequest {
  req: IncomingMessage;
  route: RouteRow;
  url: URL;
  method: string;
  stage: string;
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  query: Record<string, string>;
  multiQuery: Record<string, string[]>;
  pathParameters: Record<string, string>;
}

export function matchedRequest(
  req: IncomingMessage,
  route: RouteRow,
  url: URL,
  method: string,
  stage: string,
  path: { names: string[]; found: RegExpExecArray },
): MatchedRequest {
  const { last: headers, all: multiValueHeaders } = collect(headerPairs(req.rawHeaders));
  const { last: query, all: multiQuery } = collect(url.searchParams);
  const pathParameters = dictionary<string>();
  path.names.forEach((name, i) => {
    pathParameters[name] = decodeURIComponent(path.found[i + 1]!);
  });
  // API Gateway tells the function how the client connected.
  headers['X-Forwarded-Proto'] = 'http';
  multiValueHeaders['X-Forwarded-Proto'] = ['http'];
  return { req, route, url, method, stage, headers, multiValueHeaders, query, multiQuery, pathParameters };
}

export function authorizerEventOf(m: MatchedRequest): APIGatewayRequestAuthorizerEvent {
  return {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:us-east-1:000000000000:local/${m.stage}/${m.method}${m.url.pathname}`,
    resource: m.route.path,
    path: m.url.pathname,
    httpMethod: m.method,
    headers: m.headers,
    multiValueHeaders: m.multiValueHeaders,
    pathParameters: m.pathParameters,
    queryStringParameters: m.query,
    multiValueQueryStringParameters: m.multiQuery,
    stageVariables: {},
    requestContext: {} as APIGatewayRequestAuthorizerEvent['requestContext'],
  };
}

export function proxyEventOf(
  m: MatchedRequest,
  body: Buffer,
  authorization: APIGatewayAuthorizerResult | undefined,
  requestId: string,
): APIGatewayProxyEvent {
  const { req, route, url, method, headers, query, multiQuery, pathParameters } = m;
  const binary = body.length > 0 && isBinaryMediaType(headerOf(headers, 'content-type'));
  const now = new Date();
  return {
    resource: route.path,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders: m.multiValueHeaders,
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
      stage: m.stage,
    },
  };
}
