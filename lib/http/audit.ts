import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { writeAuditRecord } from '#lib/audit/audit-log';
import type { AuditPhase, AuditRecord } from '#lib/audit/audit-record';
import { type RouteAudit, routeAudit } from '#lib/routes/audit-spec';
import { type Route, routes } from '#lib/routes/route-table';
import { ID_MAX_LENGTH, ID_PATTERN } from '#lib/validation/schemas/common';
import type { ApiResult } from './response.ts';

/**
 * The audit trail (HIPAA § 164.312(b)): every call of a route with an audit spec (lib/routes/audit-spec.ts)
 * leaves its records on stdout (lib/audit/audit-log.ts): the intent, written by the last
 * middleware before the handler, and the outcome, with the final status the client received. The
 * outcome runs as Middy's `requestEnd` hook rather than as a middleware `after`/`onError`: that hook
 * runs once per invocation after every middleware, including problem details' onError and an
 * idempotent replay's early return, which skip the `after` of the middlewares around them. A call
 * that times out or crashes in its handler leaves its intent: it was written, synchronously, before.
 *
 * Ids only: path variables and body fields the route declares, and only when they look like ids,
 * so a name typed where an id belongs never reaches the trail.
 */

/** What a handler can tell the trail that the request context cannot: a scraper token's subject. */
export interface AuditSubject {
  clientId: string;
  clientUserId?: string;
  /** The scraper token's id (`jti`). */
  tokenId?: string;
}

const subjects = new WeakMap<object, AuditSubject>();

/** For handlers that authenticate the caller themselves: who it was, once verified. */
export const auditSubject = (event: object, subject: AuditSubject) => {
  subjects.set(event, subject);
};

const idPattern = new RegExp(ID_PATTERN);
/** Ours are UUIDs; clients' ids follow ID_PATTERN. Anything else is recorded as null. */
const asId = (value: unknown): string | null =>
  typeof value === 'string' && value.length <= ID_MAX_LENGTH && idPattern.test(value) ? value : null;

const asIds = (value: unknown): string[] | null =>
  Array.isArray(value) ? value.map(asId).filter((id): id is string => id !== null) : null;

type AuditedEvent = Omit<APIGatewayProxyEvent, 'body'> & { body: unknown };

export const routeOf = (event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'resource'>): Route | undefined =>
  routes.find((route) => route.method === event.httpMethod && route.path === event.resource);

/** The body's field, once parsed (a refused body is still a string, or a multipart form). */
const bodyField = (body: unknown, field: string): unknown =>
  body !== null && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, field)
    ? (body as Record<string, unknown>)[field]
    : undefined;

const locationOf = (response: ApiResult | null | undefined): string | undefined => {
  const location = response?.headers?.Location ?? response?.headers?.location;
  return typeof location === 'string' ? location : undefined;
};

const resourceIdsOf = (audit: RouteAudit, event: AuditedEvent, response: ApiResult | null | undefined) => {
  const ids: Record<string, string | string[] | null> = {};
  for (const [variable, name] of Object.entries(audit.ids ?? {})) ids[name] = asId(event.pathParameters?.[variable]);
  for (const [field, name] of Object.entries(audit.bodyIds ?? {})) {
    const values = asIds(bodyField(event.body, field));
    if (values) ids[name] = values;
  }
  const location = locationOf(response);
  if (audit.createdId && location && (response?.statusCode ?? 500) < 300) {
    const segment = location.split('?')[0]!.split('/').at(-1) ?? '';
    ids[audit.createdId] = asId(safeDecode(segment));
  }
  return ids;
};

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

const clientUserIdOf = (audit: RouteAudit, event: AuditedEvent, subject: AuditSubject | undefined) => {
  if (subject?.clientUserId) return subject.clientUserId;
  if (audit.clientUserId === 'body') return asId(bodyField(event.body, 'clientUserId'));
  if (audit.clientUserId) return asId(event.pathParameters?.[audit.clientUserId.path]);
  return null;
};

const stringOrNull = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

const auditRecordOf = (
  phase: AuditPhase,
  route: Route & { audit: RouteAudit },
  request: Pick<Request<AuditedEvent, ApiResult>, 'event' | 'context' | 'response'>,
  now = new Date(),
): AuditRecord => {
  const { event, response } = request;
  const { audit } = route;
  const authorizer = event.requestContext?.authorizer;
  const subject = subjects.get(event);
  const credential = route.auth === 'scraper-token' ? 'scraperToken' : 'apiKey';
  return {
    phase,
    time: now.toISOString(),
    action: audit.action,
    route: `${route.method} ${route.path}`,
    // No response at all: the function failed, and API Gateway answers 502.
    outcome: phase === 'intent' ? null : (response?.statusCode ?? 502),
    clientId: subject?.clientId ?? stringOrNull(authorizer?.clientId),
    credential,
    keyId: credential === 'scraperToken' ? (subject?.tokenId ?? null) : stringOrNull(authorizer?.keyId),
    clientUserId: clientUserIdOf(audit, event, subject),
    resource: { type: audit.resource, ids: resourceIdsOf(audit, event, response) },
    requestId: stringOrNull(event.requestContext?.requestId),
    lambdaRequestId: stringOrNull(request.context?.awsRequestId),
    sourceIp: stringOrNull(event.requestContext?.identity?.sourceIp),
  };
};

/** The route of an audited call, or undefined (a handler invoked outside the gateway, or `audit: false`). */
const auditedRouteOf = (event: AuditedEvent | undefined): (Route & { audit: RouteAudit }) | undefined => {
  const route = event && routeOf(event);
  const audit = route && routeAudit[route.handler];
  return audit ? { ...route, audit } : undefined;
};

const record = (phase: AuditPhase, request: Request) => {
  const audited = request as Request<AuditedEvent, ApiResult>;
  const route = auditedRouteOf(audited.event);
  if (route) writeAuditRecord(auditRecordOf(phase, route, audited));
};

/**
 * endpoint()'s audit trail: `intent`, the middleware it registers last (its `before` runs right before
 * the handler, once the body is parsed and validated, so the intent has the body's ids), and
 * `outcome`, its requestEnd hook. A call refused before the handler (its body, an idempotent replay)
 * leaves only the outcome: nothing stored was read or written for it but an idempotent replay's stored answer.
 */
export const auditTrail = () => ({
  intent: { before: (request) => record('intent', request) } satisfies MiddlewareObj,
  outcome: async (request: Request) => record('outcome', request),
});
