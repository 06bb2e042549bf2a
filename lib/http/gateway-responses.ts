import type { APIGatewayProxyResult } from 'aws-lambda';
import { AUTHORIZER_CACHE_TTL_SECONDS } from '#lib/config/defaults';
import { baseHeaders } from './response.ts';

/**
 * What API Gateway itself answers, before any handler runs. The CDK stack configures its
 * gateway responses from these bodies and the local gateway sends them verbatim, so clients see
 * one problem-details shape whether a handler or the gateway refused them.
 */
export const GATEWAY_LIMITS = {
  /** API Gateway REST: 10 MB request payload. */
  maxPayloadBytes: 10 * 1024 * 1024,
  /** Lambda: a synchronous invocation's event must be smaller than 6 MiB (API Gateway answers 413 otherwise). */
  maxLambdaRequestBytes: 6 * 1024 * 1024,
  /** Lambda: 6 MB synchronous response. */
  maxLambdaResponseBytes: 6 * 1024 * 1024,
  authorizerCacheTtlSeconds: AUTHORIZER_CACHE_TTL_SECONDS,
} as const;

/** Bodies API Gateway hands to Lambda base64-encoded (uploads); JSON stays text. */
export const BINARY_MEDIA_TYPES = ['multipart/form-data', 'application/octet-stream'] as const;

export const isBinaryMediaType = (contentType: string | undefined): boolean => {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  return BINARY_MEDIA_TYPES.some((binary) => binary === mediaType);
};

export interface GatewayProblem {
  /** CDK ResponseType name. */
  type: string;
  status: number;
  title: string;
  detail: string;
}

export const GATEWAY_PROBLEMS = {
  /**
   * A request line API Gateway cannot decode: a path or query string whose percent-encoding is not
   * valid UTF-8 (`%ZZ`, a lone `%`, overlong `%C0%AF`, surrogate `%ED%A0%80`). API Gateway refuses
   * such URLs with 400 before authorization or routing, unlike most web servers that pass them on.
   */
  badRequest: {
    type: 'BAD_REQUEST_PARAMETERS',
    status: 400,
    title: 'Bad Request',
    detail: 'The request URL is not validly percent-encoded UTF-8.',
  },
  unauthorized: {
    type: 'UNAUTHORIZED',
    status: 401,
    title: 'Unauthorized',
    detail: 'A valid x-api-key header is required.',
  },
  accessDenied: {
    type: 'ACCESS_DENIED',
    status: 403,
    title: 'Forbidden',
    detail: 'This API key may not call this endpoint.',
  },
  /**
   * AWS only: methods require a usage plan key (infra/config.ts `usageKeysRequired`) and the authorizer
   * named none for the client, or one in no usage plan. The local gateway meters clients without keys.
   */
  usageKeyMissing: {
    type: 'INVALID_API_KEY',
    status: 403,
    title: 'Forbidden',
    detail: 'This client has no usage plan key yet: the operator of this API must attach one.',
  },
  notFound: {
    type: 'MISSING_AUTHENTICATION_TOKEN',
    status: 404,
    title: 'Not Found',
    detail: 'No endpoint matches this method and path.',
  },
  payloadTooLarge: {
    type: 'REQUEST_TOO_LARGE',
    status: 413,
    title: 'Payload Too Large',
    detail:
      `The request exceeds the gateway limit of ${GATEWAY_LIMITS.maxPayloadBytes} bytes, or the ` +
      `${GATEWAY_LIMITS.maxLambdaRequestBytes} bytes of the event it becomes (binary bodies count base64-encoded).`,
  },
  throttled: {
    type: 'THROTTLED',
    status: 429,
    title: 'Too Many Requests',
    detail: 'The request rate limit was exceeded.',
  },
  /** A usage plan's quota used up (API Gateway's own answer is a 429 "Limit Exceeded"). */
  quotaExceeded: {
    type: 'QUOTA_EXCEEDED',
    status: 429,
    title: 'Too Many Requests',
    detail: 'Limit Exceeded: the daily request quota is used up.',
  },
  /** A handler that crashed or answered something API Gateway cannot send (Lambda error → 502). */
  badGateway: {
    type: 'DEFAULT_5XX',
    status: 502,
    title: 'Bad Gateway',
    detail: 'The endpoint failed to produce a response.',
  },
  /** The authorizer itself failed (not a refused key: that is 401). One response per type: API Gateway allows no more. */
  authorizerFailure: {
    type: 'AUTHORIZER_FAILURE',
    status: 500,
    title: 'Internal Server Error',
    detail: 'The request could not be authorized because of an internal error.',
  },
} as const satisfies Record<string, GatewayProblem>;

export const problemBody = (problem: GatewayProblem) =>
  ({ type: 'about:blank', title: problem.title, status: problem.status, detail: problem.detail }) as const;

const respond = (problem: GatewayProblem): APIGatewayProxyResult => ({
  statusCode: problem.status,
  headers: { ...baseHeaders, 'Content-Type': 'application/problem+json; charset=utf-8' },
  body: JSON.stringify(problemBody(problem)),
});

export const gatewayResponses = {
  badRequest: () => respond(GATEWAY_PROBLEMS.badRequest),
  unauthorized: () => respond(GATEWAY_PROBLEMS.unauthorized),
  accessDenied: () => respond(GATEWAY_PROBLEMS.accessDenied),
  notFound: () => respond(GATEWAY_PROBLEMS.notFound),
  payloadTooLarge: () => respond(GATEWAY_PROBLEMS.payloadTooLarge),
  throttled: () => respond(GATEWAY_PROBLEMS.throttled),
  quotaExceeded: () => respond(GATEWAY_PROBLEMS.quotaExceeded),
  badGateway: () => respond(GATEWAY_PROBLEMS.badGateway),
  authorizerFailure: () => respond(GATEWAY_PROBLEMS.authorizerFailure),
};
