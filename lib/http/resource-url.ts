import type { APIGatewayProxyEvent } from 'aws-lambda';
import { routes } from '#lib/routes';

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
  handler: string,
  parameters: Record<string, string>,
): string => {
  const candidates = routes.filter((route) => route.method === 'GET' && route.handler === handler);
  const route =
    candidates.find((candidate) => versionOf(candidate.path) === versionOf(event.resource)) ??
    candidates.find((candidate) => !candidate.successor);
  if (!route) throw new Error(`No GET route is served by ${handler}`);
  return fillPath(route.path, parameters);
};
