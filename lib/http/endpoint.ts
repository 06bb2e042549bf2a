import middy, { type MiddlewareObj } from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { ValidationFailed } from '#lib/errors';
import { JsonBodyRefused, parseJsonBody } from '#lib/json/safe-json';
import { observeRequests } from '#lib/observability/invocation';
import { log } from '#lib/observability/logger';
import { assertValid, type CompiledValidator } from '#lib/validation/validator';
import type { ApiEvent } from './api-event.ts';
import { auditTrail, routeOf } from './audit.ts';
import { deprecationHeaders } from './deprecation.ts';
import { asProblem } from './domain-errors.ts';
import type { IdempotencyMiddleware } from './idempotency.ts';
import {
  badRequest,
  HttpProblem,
  payloadTooLarge,
  problemOfHttpError,
  UNEXPECTED_ERROR,
  unsupportedMediaType,
} from './problem.ts';
import { bodyBytesOf, mediaTypeOf } from './request-body.ts';
import { type ApiResult, json, problemJson } from './response.ts';

export type ApiHandler<TBody> = (event: ApiEvent<TBody>, context: Context) => Promise<ApiResult>;

/** JSON bodies above this are refused with 413 before parsing (a request item must fit DynamoDB's 400 KB). */
export const MAX_JSON_BODY_BYTES = 256 * 1024;
const JSON_MEDIA_TYPES = ['application/json'];

export interface JsonBodyOptions {
  /** The body's schema, compiled: its module under lib/validation/generated/per-schema/. */
  validator?: CompiledValidator;
  /** Accepted media types besides application/json (e.g. application/merge-patch+json). */
  mediaTypes?: string[];
  maxBytes?: number;
  /**
   * What a request without a body (whatever its Content-Type) stands for, to be validated like any
   * body; without it, such a request is a 400 problem. `{}` makes a missing body a Validation result
   * naming the required properties (the RPA endpoints, which once took no body).
   */
  absentBody?: Record<string, never>;
}

/** A body parser for a media type other than JSON; its middleware hands other media types to `otherwise`. */
export interface BodyParser {
  mediaType: string;
  middleware: (otherwise?: MiddlewareObj<ApiEvent<unknown>, ApiResult>) => MiddlewareObj<ApiEvent<unknown>, ApiResult>;
}

/**
 * Wraps a handler in the house middleware order: normalize headers → parse body → validate →
 * idempotency → handler → errors to problem details (domain errors mapped by domain-errors.ts).
 * The error middleware is registered first so that its onError runs last, after every other
 * middleware had its say; only the deprecation headers (obsolete routes, see deprecation.ts) come
 * before it, so they mark problem responses too.
 *
 * `idempotency` (idempotency.ts: `idempotentRequests()`, for routes that create or start
 * something) comes in two halves. Its guard runs after validation, so a refused body never
 * writes a record, and its onError runs before the problem details'. Its store is registered
 * before everything, so its `after` runs last and keeps the response exactly as sent, deprecation
 * headers included: a replay returns early, skipping every `after`, and is that response as it is.
 * The audit trail (audit.ts) writes its intent in the last `before`, right before the handler, and
 * its outcome in Middy's requestEnd hook, not a middleware: it sees that final response, replays and
 * problem details included.
 */
export const endpoint = <TBody = undefined>(
  handler: ApiHandler<TBody>,
  options: {
    json?: JsonBodyOptions;
    /** multipart.ts's `multipartBody(limits)`: passed in, so JSON functions bundle no multipart parser. */
    multipart?: BodyParser;
    idempotency?: IdempotencyMiddleware;
  } = {},
) => {
  // The audit trail's outcome and the request's metrics run once the response is final, whichever way
  // it was made (audit.ts); the logger's context is set before anything else (lib/observability/invocation.ts).
  const observability = observeRequests(routeOf);
  const audit = auditTrail();
  const stack = middy<ApiEvent<TBody>, ApiResult>({ requestEnd: observability.requestEnd(audit.outcome) });
  stack.use(observability.middlewares);
  if (options.idempotency) stack.use(options.idempotency.store);
  stack.use(deprecationHeaders<ApiEvent<TBody>>()).use(problemDetails()).use(httpHeaderNormalizer());
  // With both, the Content-Type picks the parser; the body is then a MultipartForm or parsed JSON.
  // A JSON body is validated as it is parsed (a multipart form is read against its limits instead).
  const jsonParser = options.json && jsonBody(options.json, options.multipart ? [options.multipart.mediaType] : []);
  if (options.multipart) stack.use(options.multipart.middleware(jsonParser));
  else if (jsonParser) stack.use(jsonParser);
  if (options.idempotency) stack.use(options.idempotency.guard);
  // Last: the audit trail's intent, written right before the handler runs (audit.ts).
  stack.use(audit.intent);
  return stack.handler(handler);
};

/**
 * JSON bodies: size, media type, then lib/json/safe-json.ts, then the route's validator. Not
 * @middy/http-json-body-parser, which refuses `__proto__` members (ordinary members here) and parses
 * through a recursive reviver before any depth check could run (docs/architecture.md, "Body parsers").
 */
const jsonBody = (
  options: JsonBodyOptions,
  alsoAccepted: string[] = [],
): MiddlewareObj<ApiEvent<unknown>, ApiResult> => {
  const accepted = [...JSON_MEDIA_TYPES, ...(options.mediaTypes ?? [])];
  const maxBytes = options.maxBytes ?? MAX_JSON_BODY_BYTES;
  return {
    before: (request) => {
      const event = request.event as unknown as APIGatewayProxyEvent;
      const bytes = bodyBytesOf(event);
      if (bytes.length === 0 && options.absentBody) {
        request.event.body = { ...options.absentBody };
        if (options.validator) assertValid(options.validator, request.event.body);
        return;
      }
      if (bytes.length > maxBytes) throw payloadTooLarge(maxBytes);
      if (!accepted.includes(mediaTypeOf(event.headers?.['content-type']))) {
        throw unsupportedMediaType([...accepted, ...alsoAccepted]);
      }
      if (bytes.length === 0) throw badRequest('A JSON request body is required.');
      const text = bytes.toString('utf8');
      try {
        request.event.body = parseJsonBody(text);
      } catch (error) {
        // Syntax, nesting deeper than MAX_JSON_DEPTH, or numbers a double cannot hold (lib/json/safe-json.ts).
        if (error instanceof JsonBodyRefused) throw badRequest(error.message, error.details);
        throw error;
      }
      if (options.validator) assertValid(options.validator, request.event.body);
    },
  };
};

const problemDetails = (): MiddlewareObj<ApiEvent<unknown>, ApiResult> => ({
  onError: (request) => {
    const { error } = request;
    if (error instanceof ValidationFailed) {
      request.response = json(400, { succeeded: false, errors: error.errors, type: 'none' });
      return;
    }
    // Ours and the domain's first; then any Middy middleware's HttpError (statusCode, expose).
    let problem = asProblem(error);
    if (!problem) {
      problem = problemOfHttpError(error);
      if (!problem || problem.status >= 500) {
        // Name and stack only: messages of SDK or parser errors can quote stored data.
        log.error('Unhandled error', {
          errorName: (error as Error | undefined)?.name,
          stack: (error as Error | undefined)?.stack?.split('\n').slice(1, 6).join(' | '),
        });
      }
      problem ??= new HttpProblem(500, UNEXPECTED_ERROR);
    }
    request.response = problemJson(
      problem.status,
      {
        type: 'about:blank',
        title: problem.title,
        status: problem.status,
        detail: problem.detail,
        ...problem.extensions,
        requestId: request.context.awsRequestId,
      },
      problem.headers,
    );
  },
});
