import { type Route, routes } from '#lib/routes/route-table';
import type { Body, Step } from './json-body.ts';
import { DEFAULT_ACCEPTS, type FamilyRow, hostileRoutes, type RouteRow, type Stores } from './table.ts';
import type { CaseIds, World } from './world.ts';

/** The route table, imported here and only here: when it moves, this is the line to change. */
export const apiRoutes: readonly Route[] = routes;

/** A route with its row of the table (table.ts) applied in a world: what a case sends it. */
export interface RouteTarget {
  route: Route;
  apiKey: string;
  variables: string[];
  /** Path with every variable filled in; `segments` replace a variable's (already encoded) segment. */
  path(ids: CaseIds, segments?: Record<string, string>): string;
  /** A valid body whose `ID` is replaced by `idOf(ids)` when sent; undefined for routes without a body. */
  fixture?: Body;
  idOf(ids: CaseIds): string;
  /** Media types the route accepts for its body (lower case, no parameters); none: it takes no body. */
  mediaTypes: string[];
  stores?: Stores;
  /** Members of the fixture stored as sent (see placesOf). */
  freeForm: Step[][];
  /** The sentinel's id for each variable, for traversal aimed at it. */
  sentinelOf(variable: string): string;
}

const takesBody = (route: Route) => route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';

/** Defaults for variables by where they stand: the suite's own (play) data. */
const playValue = (route: Route, variable: string, world: World): string => {
  if (variable === 'name') return 'Request';
  if (variable === 'attachmentId') return world.play.attachment;
  if (route.path.includes('/Portals/')) return world.play.account;
  if (route.path.includes('/Payers/connections/')) return world.play.connection;
  if (route.path.includes('/Requests/')) return world.play.request;
  return 'hostile-generic';
};

const sentinelValue = (route: Route, variable: string, world: World): string => {
  if (variable === 'attachmentId') return world.sentinel.attachment;
  if (route.path.includes('/Portals/')) return world.sentinel.account;
  if (route.path.includes('/Payers/connections/')) return world.sentinel.connection;
  return world.sentinel.request;
};

export const targetOf = (route: Route, world: World): RouteTarget => {
  const row: RouteRow = hostileRoutes[route.handler] ?? {};
  const variables = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
  const valueFor = (variable: string, ids: CaseIds) =>
    row.ids?.[variable]?.(ids, world) ?? playValue(route, variable, world);
  const idVariable = variables.find((variable) => variable !== 'name' && variable !== 'attachmentId');
  const fixture = row.body?.(world) ?? (takesBody(route) ? {} : undefined);
  return {
    route,
    apiKey: world.apiKey,
    variables,
    path: (ids, segments = {}) =>
      route.path.replace(/\{(\w+)\}/g, (_, variable: string) => segments[variable] ?? valueFor(variable, ids)),
    ...(fixture === undefined ? {} : { fixture }),
    idOf: (ids) => (idVariable && route.method !== 'POST' ? decodeURIComponent(valueFor(idVariable, ids)) : ids.fresh),
    mediaTypes: takesBody(route) ? (row.accepts ?? DEFAULT_ACCEPTS) : [],
    freeForm: row.freeForm ?? [],
    ...(row.stores ? { stores: row.stores } : {}),
    sentinelOf: (variable) => sentinelValue(route, variable, world),
  };
};

const nameOf = (route: Route) => `${route.method} ${route.path.replace(/^\/api\/external/, '')}`;

/**
 * A family's test cases, named before the world exists (vitest names tests when it collects them): the
 * index of a route in `apiRoutes`, for its target once the world is made.
 */
export const casesOver = (over: FamilyRow['over']): { index: number; name: string }[] => {
  const all = apiRoutes.map((route, index) => ({ index, name: nameOf(route) }));
  if (over === 'routes with a body') return all.filter(({ index }) => takesBody(apiRoutes[index]!));
  if (over === 'every route') return all;
  const paths = [...new Set(apiRoutes.map((route) => route.path))];
  return paths.map((path) => ({ index: apiRoutes.findIndex((route) => route.path === path), name: path }));
};
