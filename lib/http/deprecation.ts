import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type Route, routes } from '#lib/routes/route-table';
import { fillPath } from './resource-url.ts';
import type { ApiResult } from './response.ts';

/**
 * Obsolete routes (rows of the route table with a `successor`) answer every response, success or
 * problem, with:
 *   Deprecation: @<unix seconds>                  (RFC 9745: deprecated since)
 *   Sunset: <IMF-fixdate>                          (RFC 8594: when the route stops answering)
 *   Link: <successor path>; rel="successor-version" (RFC 5829; path variables filled in)
 * The route is found by the event's resource template and method, so one handler module can
 * serve both the obsolete and the current path and only the obsolete one is marked.
 *
 * Dates: the spec made v1 Portals obsolete on 2025-03-10; they are sunset on 2027-07-01
 * (documented in docs/portal-accounts.md). A future deprecation with other dates adds a policy here.
 */
export interface DeprecationPolicy {
  deprecatedAt: Date;
  sunsetAt: Date;
}

export const V1_PORTALS_DEPRECATION: DeprecationPolicy = {
  deprecatedAt: new Date('2025-03-10T00:00:00Z'),
  sunsetAt: new Date('2027-07-01T00:00:00Z'),
};

const obsolete = new Map<string, Route>(
  routes.filter((route) => route.successor).map((route) => [`${route.method} ${route.path}`, route]),
);

export const deprecationHeadersOf = (
  event: Pick<APIGatewayProxyEvent, 'httpMethod' | 'resource' | 'pathParameters'>,
  policy: DeprecationPolicy = V1_PORTALS_DEPRECATION,
): Record<string, string> | undefined => {
  const route = obsolete.get(`${event.httpMethod} ${event.resource}`);
  if (!route?.successor) return undefined;
  return {
    Deprecation: `@${Math.floor(policy.deprecatedAt.getTime() / 1000)}`,
    Sunset: policy.sunsetAt.toUTCString(),
    Link: `<${fillPath(route.successor, event.pathParameters)}>; rel="successor-version"`,
  };
};

type RoutedEvent = Pick<APIGatewayProxyEvent, 'httpMethod' | 'resource' | 'pathParameters'>;

export const deprecationHeaders = <TEvent extends RoutedEvent>(): MiddlewareObj<TEvent, ApiResult> => {
  const mark = (request: { event: TEvent; response: ApiResult | null | undefined }) => {
    const headers = request.response && deprecationHeadersOf(request.event);
    if (headers && request.response) request.response.headers = { ...request.response.headers, ...headers };
  };
  return { after: mark, onError: mark };
};
