import { describe, expect, it } from 'vitest';
import { deprecationHeadersOf, V1_PORTALS_DEPRECATION } from '#lib/http/deprecation';
import { routeAccess } from '#lib/routes/access-model';
import { functionNameOf, routes } from '#lib/routes/route-table';

const v1 = '/api/external/v1/Portals/accounts';
const v11 = '/api/external/v1.1/Portals/accounts';

describe('v1 Portals routes', () => {
  it('mirror every v1.1 Portals route with the same handler and the v1.1 path as successor', () => {
    const current = routes.filter((route) => route.path.startsWith(`${v11}`));
    const obsolete = routes.filter((route) => route.path.startsWith(`${v1}`));
    expect(current).toHaveLength(6);
    expect(
      obsolete.map(({ method, handler, successor }) => ({ method, handler, access: routeAccess[handler], successor })),
    ).toEqual(
      current.map(({ method, handler, path }) => ({ method, handler, access: routeAccess[handler], successor: path })),
    );
    expect(current.every((route) => !route.successor)).toBe(true);
    expect(obsolete.map(functionNameOf)).toContain('CreatePortalAccountV1');
  });

  it('encrypt secrets only where they are written', () => {
    const encrypting = routes
      .filter((route) => routeAccess[route.handler].secrets === 'encrypt' && route.path.includes('/Portals/'))
      .map((r) => `${r.method} ${r.path}`);
    expect(encrypting.sort()).toEqual(
      [`POST ${v11}`, `PUT ${v11}/{externalId}`, `POST ${v1}`, `PUT ${v1}/{externalId}`].sort(),
    );
    // The only others: a webhook's signing secret, sealed where it is created and rotated (docs/webhooks.md).
    const others = routes.filter(
      (route) => routeAccess[route.handler].secrets === 'encrypt' && !route.path.includes('/Portals/'),
    );
    expect(others.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'POST /api/external/v1.1/Webhooks',
      'POST /api/external/v1.1/Webhooks/{webhookId}/rotate-secret',
    ]);
  });

  it('use one variable name per path level, as API Gateway requires', () => {
    const names = new Map<string, string>();
    for (const route of routes) {
      const segments = route.path.split('/');
      segments.forEach((segment, i) => {
        if (!segment.startsWith('{')) return;
        const level = `${segments.slice(0, i).join('/')}/*`;
        expect(names.get(level) ?? segment, level).toBe(segment);
        names.set(level, segment);
      });
    }
  });
});

describe('deprecation headers', () => {
  it('mark obsolete routes with Deprecation, Sunset and a filled-in successor Link', () => {
    expect(
      deprecationHeadersOf({
        httpMethod: 'GET',
        resource: `${v1}/{externalId}`,
        pathParameters: { externalId: 'a b' },
      }),
    ).toEqual({
      Deprecation: '@1741564800',
      Sunset: 'Thu, 01 Jul 2027 00:00:00 GMT',
      Link: `<${v11}/a%20b>; rel="successor-version"`,
    });
    expect(V1_PORTALS_DEPRECATION.deprecatedAt.toISOString()).toBe('2025-03-10T00:00:00.000Z');
  });

  it('leave current routes alone', () => {
    expect(deprecationHeadersOf({ httpMethod: 'GET', resource: `${v11}/{externalId}`, pathParameters: {} })).toBe(
      undefined,
    );
    expect(deprecationHeadersOf({ httpMethod: 'PATCH', resource: `${v1}/{externalId}`, pathParameters: {} })).toBe(
      undefined,
    );
  });
});
