import { describe, expect, it } from 'vitest';
import { absoluteUrl, fillPath, resourceUrl } from '#lib/http/resource-url';

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

describe('absoluteUrl', () => {
  const session = '/api/external/v1/ServiceReviews/requests/A-1/rpa/session';
  const called = '/api/external/v1/ServiceReviews/requests/A-1/rpa';
  const eventOf = (requestContext: Record<string, unknown>, headers: Record<string, string> = {}) =>
    ({ path: called, headers, requestContext }) as unknown as Parameters<typeof absoluteUrl>[0];

  it('on AWS: https, the execute-api domain and the stage the client called', () => {
    const event = eventOf(
      { domainName: 'abc123.execute-api.us-east-1.amazonaws.com', path: `/prod${called}` },
      { Host: 'abc123.execute-api.us-east-1.amazonaws.com', 'X-Forwarded-Proto': 'https' },
    );
    expect(absoluteUrl(event, session)).toBe(`https://abc123.execute-api.us-east-1.amazonaws.com/prod${session}`);
  });

  it('behind a custom domain: the base path it maps, and https when the gateway says nothing', () => {
    const event = eventOf({ domainName: 'api.example.com', path: `/reviews${called}` });
    expect(absoluteUrl(event, session)).toBe(`https://api.example.com/reviews${session}`);
    expect(absoluteUrl(eventOf({ domainName: 'api.example.com', path: called }), session)).toBe(
      `https://api.example.com${session}`,
    );
  });

  it('locally: the host the client used, over http as the local gateway says', () => {
    const event = eventOf({ domainName: '127.0.0.1:3000', path: called }, { 'x-forwarded-proto': 'http' });
    expect(absoluteUrl(event, session)).toBe(`http://127.0.0.1:3000${session}`);
    expect(absoluteUrl(eventOf({}, { host: 'localhost:4000', 'X-Forwarded-Proto': 'http' }), session)).toBe(
      `http://localhost:4000${session}`,
    );
  });
});
