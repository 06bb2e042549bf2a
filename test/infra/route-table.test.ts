import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { routeAccess } from '#lib/routes/access-model';
import { eventFunctions } from '#lib/routes/event-functions';
import { functionNameOf, routes } from '#lib/routes/route-table';

const handlerSource = (handler: string) =>
  readFileSync(new URL(`../../functions/${handler}.ts`, import.meta.url), 'utf8');

const segmentsOf = (path: string) => path.split('/').slice(1);
const variableOf = (segment: string | undefined) => /^\{(\w+)\}$/.exec(segment ?? '')?.[1];

describe('route table, as API Gateway needs it', () => {
  it('names sibling path variables alike: one variable name per path level', () => {
    for (const a of routes) {
      for (const b of routes) {
        const [left, right] = [segmentsOf(a.path), segmentsOf(b.path)];
        // Walk the common resource path; where both have a variable at the same level, it is one resource.
        for (let level = 0; level < Math.min(left.length, right.length); level++) {
          const [variableA, variableB] = [variableOf(left[level]), variableOf(right[level])];
          if (variableA && variableB) {
            expect({ a: a.path, b: b.path, level, name: variableA }).toEqual({
              a: a.path,
              b: b.path,
              level,
              name: variableB,
            });
          } else if (left[level] !== right[level]) {
            break;
          }
        }
      }
    }
  });

  it('has one route per method and path', () => {
    const keys = routes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('gives every function a distinct name (they become construct ids)', () => {
    const names = [...routes.map(functionNameOf), ...eventFunctions.map((fn) => fn.name), 'Authorizer'];
    expect(new Set(names).size).toBe(names.length);
  });

  it("lets the idempotent routes keep Powertools' records (get, put, update, delete one record) and key their fingerprints", () => {
    const idempotent = routes.filter((route) => handlerSource(route.handler).includes('idempotentRequests('));
    expect(idempotent.map(functionNameOf).sort()).toEqual(
      [
        'CancelRequest',
        'CreateAttachment',
        'CreatePayerConnection',
        'CreatePortalAccount',
        'CreatePortalAccountV1',
        'CreateRequest',
        'StartCheckAuthStatus',
        'StartViewOnPage',
        'SubmitRequest',
      ].sort(),
    );
    for (const route of idempotent) {
      expect({
        handler: route.handler,
        actions: routeAccess[route.handler].table?.actions,
        requestFingerprints: routeAccess[route.handler].requestFingerprints,
      }).toEqual({
        handler: route.handler,
        actions: expect.arrayContaining(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem']),
        requestFingerprints: 'sign',
      });
    }
    // And no other route: the key is read only where records are fingerprinted.
    expect(
      routes
        .filter((route) => routeAccess[route.handler].requestFingerprints)
        .map(functionNameOf)
        .sort(),
    ).toEqual(idempotent.map(functionNameOf).sort());
  });
});
