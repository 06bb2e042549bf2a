import { beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant } from '#test/support/api';

let apiKey: string;
beforeAll(async () => {
  ({ apiKey } = await newTenant('schemas'));
});

/** Every `items` anywhere in a schema document. */
const allItems = (node: unknown, found: unknown[] = []): unknown[] => {
  if (Array.isArray(node)) for (const child of node) allItems(child, found);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'items') found.push(value);
      allItems(value, found);
    }
  }
  return found;
};

describe('schema endpoints', () => {
  it('lists the schemas with links', async () => {
    const res = await call('GET', '/api/external/v1.1/Schemas', { apiKey });
    expect(res.status).toBe(200);
    expect(res.body.schemas.map((s: { name: string }) => s.name)).toEqual([
      'Request',
      'PortalAccount',
      'PayerConnection',
      'RpaAccessRequest',
      'ViewOnPageRequest',
      'CheckAuthStatusBatch',
      'SubmitRequest',
      'CancelRequest',
    ]);
    expect(res.body.schemas[0]).toEqual({
      name: 'Request',
      href: '/api/external/v1.1/Schemas/Request',
      validate: '/api/external/v1.1/Schemas/Request/validate',
    });
  });

  for (const name of [
    'Request',
    'PortalAccount',
    'PayerConnection',
    'RpaAccessRequest',
    'ViewOnPageRequest',
    'CheckAuthStatusBatch',
    'SubmitRequest',
    'CancelRequest',
  ]) {
    it(`serves ${name} with every array's items as an array of schemas`, async () => {
      const res = await call('GET', `/api/external/v1.1/Schemas/${name}`, { apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/schema\+json/);
      expect(res.body).toMatchObject({ $id: name, title: name, type: 'object' });
      for (const items of allItems(res.body)) {
        expect(Array.isArray(items)).toBe(true);
        for (const schema of items as unknown[]) expect(typeof schema).toBe('object');
      }
    });
  }

  it('serves the Request with real code sets and the spec rules', async () => {
    const { body } = await call('GET', '/api/external/v1.1/Schemas/Request', { apiKey });
    expect(body.properties.placeOfServiceCode.enum).toContain('11');
    expect(body.properties.placeOfServiceCode.enum).toHaveLength(52);
    expect(body.properties.serviceTypeCode.enum).toHaveLength(187);
    expect(body.properties.admissionTypeCode.enum).toEqual(['1', '2', '3', '4', '5', '9']);
    expect(body.properties.renderingProviders.items).toHaveLength(1);
    expect(body.properties.renderingProviders.items[0].properties.roleCode.enum).toContain('SJ');
    expect(body.properties.patient.required).toEqual(['firstName', 'lastName', 'birthDate', 'memberId']);
    expect(body.properties.patient.properties).toHaveProperty('Payer');
    expect(body.properties.patient.properties).toHaveProperty('PayerId');
    expect(body.properties.procedures).not.toHaveProperty('type');
  });

  it('answers 404 for an unknown schema and for internal variants', async () => {
    for (const name of ['Nope', 'RequestAddressedByPath', 'PresignedUpload', 'PortalAccountListQuery']) {
      expect((await call('GET', `/api/external/v1.1/Schemas/${name}`, { apiKey })).status).toBe(404);
      expect((await call('POST', `/api/external/v1.1/Schemas/${name}/validate`, { apiKey, body: {} })).status).toBe(
        404,
      );
    }
  });

  it('validates an RpaAccessRequest: the body and clientUserId are required', async () => {
    const path = '/api/external/v1.1/Schemas/RpaAccessRequest/validate';
    expect((await call('POST', path, { apiKey, body: { clientUserId: 'demo-user' } })).body).toEqual({
      succeeded: true,
      errors: [],
      type: 'none',
    });
    expect((await call('POST', path, { apiKey, body: {} })).body).toEqual({
      succeeded: false,
      errors: ["/: Required error. must have required property 'clientUserId'."],
      type: 'none',
    });
  });

  it('validates a CheckAuthStatusBatch: 1 to 25 distinct request ids', async () => {
    const path = '/api/external/v1.1/Schemas/CheckAuthStatusBatch/validate';
    const body = (requestExternalIds: unknown) => ({ clientUserId: 'demo-user', requestExternalIds });
    expect((await call('POST', path, { apiKey, body: body(['A-1', 'A-2']) })).body.succeeded).toBe(true);
    expect((await call('POST', path, { apiKey, body: body(['A-1', 'A-1']) })).body.errors).toEqual([
      '/requestExternalIds: UniqueItems error. must NOT have duplicate items (items ## 1 and 0 are identical).',
    ]);
    // partial: a boolean, nothing else.
    const partial = (value: unknown) => ({ ...body(['A-1']), partial: value });
    expect((await call('POST', path, { apiKey, body: partial(true) })).body.succeeded).toBe(true);
    expect((await call('POST', path, { apiKey, body: partial(false) })).body.succeeded).toBe(true);
    expect((await call('POST', path, { apiKey, body: partial('yes') })).body.errors).toEqual([
      '/partial: Type error for value "yes". Message: must be boolean.',
    ]);
    const served = (await call('GET', '/api/external/v1.1/Schemas/CheckAuthStatusBatch', { apiKey })).body;
    expect(served.properties.requestExternalIds).toMatchObject({ minItems: 1, maxItems: 25, uniqueItems: true });
    expect(served.properties.partial).toMatchObject({ type: 'boolean' });
  });
});
