import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type HandlerId, routes } from '#lib/routes/route-table';

/** A route-table path template with its variables filled in, encoded: `/a/{x}/b` with `{x: '1 2'}` → `/a/1%202/b`. */
export const fillPath = (template: string, parameters: Record<string, string | undefined> | null) =>
  template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = parameters?.[name];
    return value === undefined ? whole : encodeURIComponent(value);
  });

/** `v1`, `v1.1`: the API version segment of a route path. */
const versionOf = (path: string) => /^\/api\/external\/([^/]+)\//.exec(path)?.[1];

/**
 * The path of a resource, e.g. for Location: the GET route of the handler module that serves it,
 * filled with `parameters`. Where that handler answers under several API versions (the obsolete v1
 * Portals mirror), the version of the route that answers `event` wins, so a client of v1 is sent
 * to a v1 path; otherwise the current route.
 */
export const resourceUrl = (
  event: Pick<APIGatewayProxyEvent, 'resource'>,
  handler: HandlerId,
  parameters: Record<string, string>,
): string => {
  const candidates = routes.filter((route) => route.method === 'GET' && route.handler === handler);
  const route =
    candidates.find((candidate) => versionOf(candidate.path) === versionOf(event.resource)) ??
    candidates.find((candidate) => !candidate.successor);
  if (!route) throw new Error(`No GET route is served by ${handler}`);
  return fillPath(route.path, parameters);
};

/**
 * An absolute URL of this API for `path` (a route path, filled), as the client reached it: the
 * gateway's domain, then whatever the gateway puts before the route's path (the stage on an
 * execute-api domain: `requestContext.path` is the full path, `event.path` the route's), so
 * `https://<id>.execute-api.<region>.amazonaws.com/prod/api/external/…` on AWS and
 * `http://127.0.0.1:3000/api/external/…` locally. API Gateway says https in X-Forwarded-Proto.
 */
export const absoluteUrl = (
  event: Pick<APIGatewayProxyEvent, 'path' | 'headers' | 'requestContext'>,
  path: string,
): string => {
  const headers = event.headers ?? {};
  const header = (name: string) =>
    headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1] ?? undefined;
  const host = event.requestContext.domainName ?? header('host');
  if (!host) throw new Error('The event names no domain');
  const scheme = header('x-forwarded-proto')?.split(',')[0]?.trim() === 'http' ? 'http' : 'https';
  const fullPath = event.requestContext.path ?? event.path;
  const prefix = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : '';
  return `${scheme}://${host}${prefix}${path}`;
};
