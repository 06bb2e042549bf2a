import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { ApiResult } from '#lib/http/response';

/** What the middleware tests call a handler wrapped by `endpoint()` with. */
export const lambdaContext = { awsRequestId: 'fn-1' } as Context;

/**
 * A REST API event as API Gateway hands it to Lambda: header names as the client wrote them, and a
 * binary media type's body base64-encoded.
 */
export const apiGatewayEvent = ({
  body,
  contentType,
  base64 = Buffer.isBuffer(body),
}: {
  body?: string | Buffer;
  contentType?: string;
  base64?: boolean;
}) =>
  ({
    httpMethod: 'POST',
    resource: '/api/external/v1.1/Things',
    path: '/api/external/v1.1/Things',
    headers: contentType === undefined ? {} : { 'Content-Type': contentType },
    multiValueHeaders: contentType === undefined ? {} : { 'Content-Type': [contentType] },
    pathParameters: null,
    queryStringParameters: null,
    body: body === undefined ? null : base64 ? Buffer.from(body).toString('base64') : body.toString(),
    isBase64Encoded: base64,
    requestContext: { requestId: 'gw-1', authorizer: { clientId: 'client-1', keyId: 'key-1' } },
  }) as unknown as APIGatewayProxyEvent;

/** Calls a handler made by `endpoint()` and reads its answer; `body` is the parsed JSON, if any. */
export const invoke = async (
  handler: (event: never, context: Context) => Promise<ApiResult>,
  event: APIGatewayProxyEvent,
) => {
  const response = await handler(event as never, lambdaContext);
  const type = response.headers?.['Content-Type'] ?? '';
  return { status: response.statusCode, type, body: response.body ? JSON.parse(response.body) : undefined };
};
