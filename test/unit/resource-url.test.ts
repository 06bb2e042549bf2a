import { describe, expect, it } from 'vitest';
import { fillPath, resourceUrl } from '#lib/http/resource-url';

const v1 = '/api/external/v1';
const v11 = '/api/external/v1.1';

describe('resourceUrl', () => {
  it('fills the GET route of a handler with encoded parameters', () => {
    expect(resourceUrl({ resource: `${v11}/Requests` }, 'requests/get-request', { externalId: 'A 1/é' })).toBe(
      `${v11}/Requests/A%201%2F%C3%A9`,
    );
    expect(
      resourceUrl({ resource: `${v11}/Requests/{externalId}/Attachments` }, 'attachments/get-attachment', {
        externalId: 'A-1',
        attachmentId: '0b7c4c1e-3a1f-4b7e-9a53-1d2e3f405060',
      }),
    ).toBe(`${v11}/Requests/A-1/Attachments/0b7c4c1e-3a1f-4b7e-9a53-1d2e3f405060`);
  });

  it('answers in the API version that was called: the obsolete v1 Portals mirror points to v1', () => {
    const get = 'portal-accounts/get-portal-account';
    expect(resourceUrl({ resource: `${v11}/Portals/accounts` }, get, { externalId: 'p-1' })).toBe(
      `${v11}/Portals/accounts/p-1`,
    );
    expect(resourceUrl({ resource: `${v1}/Portals/accounts` }, get, { externalId: 'p-1' })).toBe(
      `${v1}/Portals/accounts/p-1`,
    );
  });

  it('refuses a handler that serves no GET route', () => {
    expect(() => resourceUrl({ resource: `${v11}/Requests` }, 'requests/create-request', {})).toThrow(
      'No GET route is served by requests/create-request',
    );
  });
});

describe('fillPath', () => {
  it('leaves variables without a value as they are', () => {
    expect(fillPath('/a/{x}/b/{y}', { x: '1 2' })).toBe('/a/1%202/b/{y}');
    expect(fillPath('/a/{x}', null)).toBe('/a/{x}');
  });
});
