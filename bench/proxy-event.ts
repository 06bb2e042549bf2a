/** Who a bench's events come from: the authorizer's context, and the API key header when the bench has one. */
export interface EventCaller {
  clientId: string;
  keyId: string;
  apiKey?: string;
}

/** A proxy event as the gateway delivers it (local/gateway.ts), with the authorizer's context. */
export const proxyEvent = (
  caller: EventCaller,
  method: string,
  resource: string,
  path: string,
  externalId?: string,
  body?: unknown,
) => ({
  resource,
  path,
  httpMethod: method,
  headers: {
    Host: 'bench.local',
    ...(caller.apiKey ? { 'x-api-key': caller.apiKey } : {}),
    ...(body ? { 'Content-Type': 'application/json' } : {}),
  },
  multiValueHeaders: {},
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  pathParameters: externalId ? { externalId } : null,
  stageVariables: null,
  body: body ? JSON.stringify(body) : null,
  isBase64Encoded: false,
  requestContext: {
    accountId: '000000000000',
    apiId: 'local',
    authorizer: { clientId: caller.clientId, keyId: caller.keyId, principalId: caller.clientId },
    httpMethod: method,
    identity: { sourceIp: '127.0.0.1' },
    path,
    domainName: 'bench.local',
    protocol: 'HTTP/1.1',
    requestId: `${caller.keyId}-${Math.random()}`,
    requestTimeEpoch: Date.now(),
    resourceId: 'local',
    resourcePath: resource,
    stage: 'local',
  },
});

const REQUESTS = '/api/external/v1.1/Requests';

/** POST /v1.1/Requests with `body`. */
export const createRequestEvent = (caller: EventCaller, body: unknown) =>
  proxyEvent(caller, 'POST', REQUESTS, REQUESTS, undefined, body);

/** GET /v1.1/Requests/{externalId}. */
export const getRequestEvent = (caller: EventCaller, externalId: string) =>
  proxyEvent(caller, 'GET', `${REQUESTS}/{externalId}`, `${REQUESTS}/${externalId}`, externalId);
