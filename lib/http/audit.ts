import type { Request } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { AuditEvent, AuditSink } from '#lib/audit/audit-sink';
import { auditSinkFromEnvironment } from '#lib/audit/sink';
import { log } from '#lib/observability/logger';
import { type Route, type RouteAudit, routes } from '#lib/routes';
import { ID_MAX_LENGTH, ID_PATTERN } from '#lib/validation/schemas/common';
import type { ApiResult } from './response.ts';

/**
 * The audit trail (HIPAA § 164.312(b)): every call of a route with `audit` metadata in the route
 * table leaves exactly one event in the AuditSink (lib/audit/), with the final status the client
 * received. It runs as Middy's `requestEnd` hook rather than as a middleware: that hook runs once
 * per invocation after every middleware, including problem details' onError and an idempotent
 * replay's early return, which skip the `after` of the middlewares around them.
 *
 * Ids only: path variables and body fields the route declares, and only when they look like ids,
 * so a name typed where an id belongs never reaches the trail. A sink that fails does not fail the
 * request (the operation has happened, and a 500 would only make a client retry it): the whole
 * event is logged as an error in the function's log instead, so it is kept, and the error alarms.
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

export const auditEventOf = (
  route: Route & { audit: RouteAudit },
  request: Pick<Request<AuditedEvent, ApiResult>, 'event' | 'context' | 'response' | 'error'>,
  now = new Date(),
): AuditEvent => {
  const { event, response } = request;
  const { audit } = route;
  const authorizer = event.requestContext?.authorizer;
  const subject = subjects.get(event);
  const credential = route.auth === 'scraper-token' ? 'scraperToken' : 'apiKey';
  return {
    time: now.toISOString(),
    action: audit.action,
    route: `${route.method} ${route.path}`,
    // No response at all: the function failed, and API Gateway answers 502.
    outcome: response?.statusCode ?? 502,
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

let defaultSink: Promise<AuditSink | undefined> | undefined;
/** Resolved on the first request, after the environment is set (the local stack sets it late). */
const sinkFromEnvironment = () => {
  defaultSink ??= auditSinkFromEnvironment();
  return defaultSink;
};

const writeOrLog = async (sink: AuditSink | undefined, auditEvent: AuditEvent) => {
  try {
    if (!sink) throw new Error('No audit sink is configured (AUDIT_LOG_GROUP or LOCAL_STATE_DIR)');
    await sink.write(auditEvent);
  } catch (error) {
    // The event carries ids only, so the function's own log may keep it until the sink is back.
    log.error('Audit event not stored', {
      errorName: (error as Error | undefined)?.name,
      auditEvent: JSON.stringify(auditEvent),
    });
  }
};

/**
 * Middy's requestEnd hook for endpoint(): one event per invocation of an audited route. A route
 * the table does not know (a handler invoked outside the gateway) or one with `audit: false` is
 * not audited.
 */
export const auditTrail =
  (sink: () => Promise<AuditSink | undefined> = sinkFromEnvironment) =>
  async (request: Request) => {
    const audited = request as Request<AuditedEvent, ApiResult>;
    const route = audited.event && routeOf(audited.event);
    if (!route?.audit) return;
    await writeOrLog(await sink(), auditEventOf({ ...route, audit: route.audit }, audited));
  };
