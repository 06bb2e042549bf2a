import { describe, expect, it } from 'vitest';
import { readRouteAsset } from '#lib/openapi/route-assets';
import { OPENAPI_DOCUMENT } from '#lib/routes/route-table';
import { type Answer, conformanceTo } from '#test/support/openapi-conformance';

/** The checker the integration tests run on every answer: it must refuse what the document does not allow. */
const conformance = conformanceTo(JSON.parse(readRouteAsset(OPENAPI_DOCUMENT)));

const PROBLEM = 'application/problem+json; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const account = {
  externalId: 'a-1',
  clientUserId: 'u-1',
  organizationId: 'o-1',
  portalId: 'sandbox',
  portalName: 'Sandbox',
  payerIds: [],
  displayName: 'Sandbox',
  username: 'someone',
  status: 'active',
  lastLogin: { result: 'succeeded', at: '2026-11-24T10:00:00.000Z' },
  attention: null,
  passwordSet: true,
  passwordChangedAt: '2026-11-24T10:00:00.000Z',
  totpSecretSet: false,
  totpSecretChangedAt: null,
  createdAt: '2026-11-24T10:00:00.000Z',
  updatedAt: '2026-11-24T10:00:00.000Z',
  version: 1,
};

const answer = (overrides: Partial<Answer> & { body?: unknown; type?: string; with?: Record<string, string> }) => ({
  method: 'GET',
  path: '/api/external/v1.1/Portals/accounts/a-1',
  status: 200,
  headers: new Headers({ 'content-type': overrides.type ?? JSON_TYPE, etag: '"1"', ...overrides.with }),
  text: overrides.body === undefined ? '' : JSON.stringify(overrides.body),
  ...overrides,
});

describe('the OpenAPI conformance check', () => {
  it('passes an answer the document allows', () => {
    expect(conformance.check(answer({ body: account }))).toEqual([]);
  });

  it('refuses a body that drifts from its schema: a wrong type, a member not documented, one missing', () => {
    expect(conformance.check(answer({ body: { ...account, lastLogin: '2026-11-24T10:00:00.000Z' } }))).toContainEqual(
      expect.stringMatching(/^body\/lastLogin/),
    );
    expect(conformance.check(answer({ body: { ...account, secret: 'x' } }))).toContainEqual(
      expect.stringContaining('additional properties'),
    );
    const { version: _version, ...withoutVersion } = account;
    expect(conformance.check(answer({ body: withoutVersion }))).toContainEqual(expect.stringContaining('version'));
  });

  it('refuses a status or media type the operation does not document, and a missing required header', () => {
    expect(conformance.check(answer({ status: 202, body: account }))).toEqual([
      '202 is not documented for GET /api/external/v1.1/Portals/accounts/{externalId}',
    ]);
    expect(conformance.check(answer({ body: account, type: 'text/html' }))).toEqual([
      expect.stringContaining('Content-Type text/html is not one of'),
    ]);
    const noEtag = answer({ body: account });
    noEtag.headers.delete('etag');
    expect(conformance.check(noEtag)).toEqual(['the required header ETag is missing']);
  });

  it('refuses an undocumented problem member, and a success from no documented operation', () => {
    const problem = { type: 'about:blank', title: 'Not Found', status: 404, detail: 'No.' };
    expect(conformance.check(answer({ status: 404, type: PROBLEM, body: problem }))).toEqual([]);
    expect(conformance.check(answer({ status: 404, type: PROBLEM, body: { ...problem, stack: 'at …' } }))).toEqual([
      expect.stringContaining('additional properties'),
    ]);
    const unknownPath = { path: '/api/external/v1.1/Nothing', status: 404, type: PROBLEM, body: problem };
    expect(conformance.check(answer(unknownPath))).toEqual([]);
    expect(conformance.check(answer({ ...unknownPath, status: 200 }))).toEqual(['200 from no documented operation']);
  });

  it('checks our formats as the server does (an NPI with a wrong check digit)', () => {
    const request = JSON.parse(readRouteAsset(OPENAPI_DOCUMENT)).components.schemas.RequestRepresentation;
    expect(request.properties.requestingProvider.properties.npi.format).toBe('npi');
    const representation = {
      externalId: 'r-1',
      patient: { firstName: 'A', lastName: 'B', birthDate: '1970-01-01', memberId: 'M' },
      requestingProvider: { roleCode: '1P', npi: '1234567890' },
      admissionTypeCode: '1',
      serviceTypeCode: '1',
      placeOfServiceCode: '11',
      authorization: {
        status: 'not_submitted',
        number: null,
        decisionDate: null,
        lastCheckedAt: null,
        channel: null,
        items: [],
        reasons: [],
        decisionDueAt: null,
        informationRequested: null,
      },
      createdAt: '2026-11-24T10:00:00.000Z',
      updatedAt: '2026-11-24T10:00:00.000Z',
      version: 1,
    };
    const read = { path: '/api/external/v1.1/Requests/r-1' };
    expect(conformance.check(answer({ ...read, body: representation }))).toEqual([
      expect.stringContaining('must match format "npi"'),
    ]);
    const valid = { ...representation, requestingProvider: { roleCode: '1P', npi: '1234567893' } };
    expect(conformance.check(answer({ ...read, body: valid }))).toEqual([]);
  });
});
