import { beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant, uniqueId } from '#test/support/api';
import { portalAccountReplacementOf } from '#test/support/fixtures';

const v11 = '/api/external/v1.1/Portals/accounts';
const v1 = '/api/external/v1/Portals/accounts';
const PASSWORD = 'Portal-Pa55word!';
const TOTP = 'JBSWY3DPEHPK3PXP';

type Tenant = Awaited<ReturnType<typeof newTenant>>;

const accountBody = (clientUserId: string, overrides: Record<string, unknown> = {}) => ({
  externalId: uniqueId('pacc'),
  clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01', 'SBX02'],
  displayName: 'Sandbox – main office',
  username: 'jdoe@clinic.example',
  password: PASSWORD,
  totpSecret: TOTP,
  ...overrides,
});

const create = async (tenant: Tenant, overrides: Record<string, unknown> = {}) => {
  const body = accountBody(tenant.clientUserId, overrides);
  const res = await call('POST', v11, { apiKey: tenant.apiKey, body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
};

let tenant: Tenant;
beforeAll(async () => {
  tenant = await newTenant('portal-accounts');
});

describe('create and read', () => {
  it('creates an account: 201, Location, ETag, and secrets only as set/changed', async () => {
    const body = accountBody(tenant.clientUserId);
    const res = await call('POST', v11, { apiKey: tenant.apiKey, body });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('location')).toBe(`${v11}/${body.externalId}`);
    expect(res.headers.get('etag')).toBe('"1"');
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.body).toEqual({
      externalId: body.externalId,
      clientUserId: tenant.clientUserId,
      organizationId: tenant.organizationId,
      portalId: 'sandbox',
      portalName: expect.stringContaining('Sandbox'),
      payerIds: ['SBX01', 'SBX02'],
      displayName: 'Sandbox – main office',
      username: 'jdoe@clinic.example',
      status: 'active',
      lastLogin: null,
      attention: null,
      passwordSet: true,
      passwordChangedAt: res.body.createdAt,
      totpSecretSet: true,
      totpSecretChangedAt: res.body.createdAt,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: res.body.createdAt,
      version: 1,
    });
    expect(res.text).not.toContain(PASSWORD);
    expect(res.text).not.toContain(TOTP);

    const read = await call('GET', `${v11}/${body.externalId}`, { apiKey: tenant.apiKey });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get('etag')).toBe('"1"');
    expect(read.text).not.toContain(PASSWORD);
    const cached = await call('GET', `${v11}/${body.externalId}`, {
      apiKey: tenant.apiKey,
      headers: { 'if-none-match': '"1"' },
    });
    expect(cached.status).toBe(304);
  });

  it('matches If-None-Match as RFC 9110 says (weak tags, *, lists) on both versions of the route', async () => {
    const account = await create(tenant);
    for (const base of [v11, v1]) {
      const getWith = (ifNoneMatch: string) =>
        call('GET', `${base}/${account.externalId}`, {
          apiKey: tenant.apiKey,
          headers: { 'if-none-match': ifNoneMatch },
        });
      for (const current of ['W/"1"', '*', '"7", "1"', '"7",W/"1"  ']) {
        const res = await getWith(current);
        expect(res.status, `${base} ${current}`).toBe(304);
        expect(res.text).toBe('');
        expect(res.headers.get('etag')).toBe('"1"');
        expect(res.headers.get('cache-control')).toBe('no-store');
      }
      for (const stale of ['"2"', 'W/"2", "3"', '1']) {
        const res = await getWith(stale);
        expect(res.status, `${base} ${stale}`).toBe(200);
        expect(res.body.externalId).toBe(account.externalId);
      }
    }
  });

  it('defaults: no TOTP secret, no payers, the portal name as display name, active', async () => {
    const account = await create(tenant, {
      portalId: 'availity',
      totpSecret: undefined,
      payerIds: undefined,
      displayName: undefined,
    });
    expect(account).toMatchObject({
      portalName: 'Availity Essentials',
      displayName: 'Availity Essentials',
      payerIds: [],
      status: 'active',
      totpSecretSet: false,
      totpSecretChangedAt: null,
    });
  });

  it('answers 409 when the externalId exists', async () => {
    const account = await create(tenant);
    const res = await call('POST', v11, {
      apiKey: tenant.apiKey,
      body: accountBody(tenant.clientUserId, { externalId: account.externalId }),
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 409, title: 'Conflict' });
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('answers 404 for a clientUserId unknown to the client, and for another client’s user', async () => {
    const other = await newTenant('portal-accounts-other');
    for (const clientUserId of ['no-such-user', other.clientUserId]) {
      const res = await call('POST', v11, { apiKey: tenant.apiKey, body: accountBody(clientUserId) });
      expect(res.status).toBe(404);
      expect(res.body.detail).toContain(clientUserId);
    }
  });

  it('answers 404 for an unknown account and 401 without an API key', async () => {
    expect((await call('GET', `${v11}/${uniqueId('missing')}`, { apiKey: tenant.apiKey })).status).toBe(404);
    expect((await call('GET', `${v11}/${uniqueId('missing')}`, {})).status).toBe(401);
    expect((await call('POST', v11, { body: accountBody(tenant.clientUserId) })).status).toBe(401);
  });
});

describe('validation', () => {
  it('reports missing fields and an unknown portal as the spec’s Validation result', async () => {
    const res = await call('POST', v11, {
      apiKey: tenant.apiKey,
      body: { externalId: uniqueId('pacc'), clientUserId: tenant.clientUserId, portalId: 'no-such-portal' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      succeeded: false,
      type: 'none',
      errors: [
        "/: Required error. must have required properties 'username', 'password'.",
        '/portalId: Enum error for value "no-such-portal". Message: must be equal to one of the allowed values.',
      ],
    });
  });

  it('never quotes a secret back in a validation error', async () => {
    const badTotp = 'not-a-base32-seed-0189';
    const res = await call('POST', v11, {
      apiKey: tenant.apiKey,
      body: accountBody(tenant.clientUserId, { password: 98765432, totpSecret: badTotp, bogus: 1 }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      "/: AdditionalProperties error. must NOT have additional property 'bogus'.",
      '/password: Type error. must be string.',
      '/totpSecret: Pattern error. must match pattern "^[A-Za-z2-7]{16,128}=*$".',
    ]);
    expect(res.text).not.toContain('98765432');
    expect(res.text).not.toContain(badTotp);
  });

  it('refuses a non-JSON body and a body that is not an object, without a 500', async () => {
    const raw = await call('POST', v11, {
      apiKey: tenant.apiKey,
      rawBody: '{"password": "oops',
      headers: { 'content-type': 'application/json' },
    });
    expect(raw.status).toBe(400);
    expect(raw.text).not.toContain('oops');
    const array = await call('POST', `${v11}/filter`, { apiKey: tenant.apiKey, body: [] });
    expect(array.status).toBe(400);
    const text = await call('POST', v11, {
      apiKey: tenant.apiKey,
      rawBody: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
  });

  it('checks the path id', async () => {
    const res = await call('GET', `${v11}/${encodeURIComponent('bad#id')}`, { apiKey: tenant.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.parameter).toBe('externalId');
  });
});

describe('list by clientUserId', () => {
  it('lists the accounts of the user’s organization (any user of it), oldest first, and nothing else', async () => {
    const t = await newTenant('portal-accounts-list');
    const colleague = `colleague-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, t.organizationId, colleague);
    const { organizationId: otherOrg } = await t.admin.createOrganization(t.clientId, 'Other org');
    const outsider = `outsider-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, otherOrg, outsider);

    const first = await create(t);
    const second = await create(t, { clientUserId: colleague, portalId: 'navinet' });
    await create(t, { clientUserId: outsider });

    const res = await call('GET', `${v11}/${t.clientUserId}/list`, { apiKey: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.items.map((a: any) => a.externalId)).toEqual([first.externalId, second.externalId]);
    expect(res.body).toMatchObject({ pageSize: 25, nextCursor: null });
    expect(res.text).not.toContain(PASSWORD);
    const viaColleague = await call('GET', `${v11}/${colleague}/list`, { apiKey: t.apiKey });
    expect(viaColleague.body.items).toEqual(res.body.items);

    const paged = await call('GET', `${v11}/${t.clientUserId}/list?pageSize=1`, { apiKey: t.apiKey });
    expect(paged.body.items.map((a: any) => a.externalId)).toEqual([first.externalId]);
    const rest = await call(
      'GET',
      `${v11}/${t.clientUserId}/list?cursor=${encodeURIComponent(paged.body.nextCursor)}`,
      { apiKey: t.apiKey },
    );
    expect(rest.body.items.map((a: any) => a.externalId)).toEqual([second.externalId]);
    expect(rest.body.nextCursor).toBeNull();
  });

  it('answers 404 for an unknown clientUserId', async () => {
    expect((await call('GET', `${v11}/nobody-${uniqueId()}/list`, { apiKey: tenant.apiKey })).status).toBe(404);
  });

  it('answers a bad query with the Validation result, worded as for the filter body', async () => {
    const cases: [string, string][] = [
      ['pageSize=0', '/pageSize: Minimum error for value "0". Message: must be >= 1.'],
      ['pageSize=-1', '/pageSize: Minimum error for value "-1". Message: must be >= 1.'],
      ['pageSize=101', '/pageSize: Maximum error for value "101". Message: must be <= 100.'],
      ['pageSize=1.5', '/pageSize: Type error for value "1.5". Message: must be integer.'],
      ['pageSize=ten', '/pageSize: Type error for value "ten". Message: must be integer.'],
      ['pageSize=', '/pageSize: Type error for value "". Message: must be integer.'],
      [`cursor=${'c'.repeat(1025)}`, '/cursor: MaxLength error. must NOT have more than 1024 characters.'],
    ];
    for (const base of [v11, v1]) {
      for (const [query, text] of cases) {
        const res = await call('GET', `${base}/${tenant.clientUserId}/list?${query}`, { apiKey: tenant.apiKey });
        expect(res.status, query).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.body, query).toEqual({ succeeded: false, errors: [text], type: 'none' });
      }
    }
    const both = await call('GET', `${v11}/${tenant.clientUserId}/list?pageSize=200&cursor=${'c'.repeat(1025)}`, {
      apiKey: tenant.apiKey,
    });
    expect(both.body.errors).toEqual([
      '/pageSize: Maximum error for value "200". Message: must be <= 100.',
      '/cursor: MaxLength error. must NOT have more than 1024 characters.',
    ]);
  });

  it('reads a page size written with leading zeros, ignores an empty cursor and unknown parameters', async () => {
    const res = await call('GET', `${v11}/${tenant.clientUserId}/list?pageSize=007&cursor=&sort=name`, {
      apiKey: tenant.apiKey,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pageSize).toBe(7);
  });
});

describe('replace', () => {
  it('replaces the non-secret fields; omitted secrets stay, a new password and a null TOTP secret change', async () => {
    const account = await create(tenant);
    const url = `${v11}/${account.externalId}`;
    await new Promise((resolve) => setTimeout(resolve, 5));

    const renamed = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: { clientUserId: tenant.clientUserId, portalId: 'availity', username: 'jdoe2', status: 'disabled' },
    });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.headers.get('etag')).toBe('"2"');
    expect(renamed.body).toMatchObject({
      portalId: 'availity',
      payerIds: [],
      displayName: 'Availity Essentials',
      username: 'jdoe2',
      status: 'disabled',
      passwordSet: true,
      passwordChangedAt: account.passwordChangedAt,
      totpSecretSet: true,
      totpSecretChangedAt: account.totpSecretChangedAt,
      createdAt: account.createdAt,
      version: 2,
    });
    expect(renamed.body.updatedAt > account.updatedAt).toBe(true);

    const rotated = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: portalAccountReplacementOf(renamed.body, { password: 'N3w-password', totpSecret: null }),
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body).toMatchObject({ passwordSet: true, totpSecretSet: false, version: 3 });
    expect(rotated.body.passwordChangedAt > account.passwordChangedAt).toBe(true);
    expect(rotated.body.totpSecretChangedAt).toBe(rotated.body.passwordChangedAt);

    const readBack = await call('GET', url, { apiKey: tenant.apiKey });
    expect(readBack.body).toEqual(rotated.body);
  });

  it('answers 412 on a stale If-Match or body version, and accepts the current one', async () => {
    const account = await create(tenant);
    const url = `${v11}/${account.externalId}`;
    const first = await call('PUT', url, {
      apiKey: tenant.apiKey,
      headers: { 'if-match': '"1"' },
      body: portalAccountReplacementOf(account, { displayName: 'first writer' }),
    });
    expect(first.status).toBe(200);

    const staleHeader = await call('PUT', url, {
      apiKey: tenant.apiKey,
      headers: { 'if-match': '"1"' },
      body: portalAccountReplacementOf(account, { displayName: 'second writer' }),
    });
    expect(staleHeader.status).toBe(412);
    expect(staleHeader.body).toMatchObject({ status: 412, title: 'Precondition Failed' });
    expect(staleHeader.body.detail).toContain('"2"');

    const staleBody = await call('PUT', url, {
      apiKey: tenant.apiKey,
      body: portalAccountReplacementOf(account, { displayName: 'second writer', version: 1 }),
    });
    expect(staleBody.status).toBe(412);

    const current = await call('PUT', url, {
      apiKey: tenant.apiKey,
      headers: { 'if-match': 'W/"2"' },
      body: portalAccountReplacementOf(account, { displayName: 'second writer', version: 2 }),
    });
    expect(current.status).toBe(200);
    expect((await call('GET', url, { apiKey: tenant.apiKey })).body).toMatchObject({
      displayName: 'second writer',
      version: 3,
    });
  });

  it('lets exactly one of two concurrent writers with the same If-Match win', async () => {
    const account = await create(tenant);
    const url = `${v11}/${account.externalId}`;
    const results = await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        call('PUT', url, {
          apiKey: tenant.apiKey,
          headers: { 'if-match': '"1"' },
          body: portalAccountReplacementOf(account, { displayName: `writer ${name}`, password: `pw-${name}` }),
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412]);
  });

  it('refuses a mismatched externalId (400) and an unknown account (404)', async () => {
    const account = await create(tenant);
    const mismatch = await call('PUT', `${v11}/${account.externalId}`, {
      apiKey: tenant.apiKey,
      body: portalAccountReplacementOf(account, { externalId: 'another-id' }),
    });
    expect(mismatch.status).toBe(400);
    const missing = await call('PUT', `${v11}/${uniqueId('missing')}`, {
      apiKey: tenant.apiKey,
      body: portalAccountReplacementOf(account),
    });
    expect(missing.status).toBe(404);
    const unknownUser = await call('PUT', `${v11}/${account.externalId}`, {
      apiKey: tenant.apiKey,
      body: portalAccountReplacementOf(account, { clientUserId: 'nobody-here' }),
    });
    expect(unknownUser.status).toBe(404);
  });

  it('moves an account to another organization only with its secrets supplied again', async () => {
    const t = await newTenant('portal-accounts-move');
    const { organizationId: otherOrg } = await t.admin.createOrganization(t.clientId, 'Second org');
    const otherUser = `second-${uniqueId()}`;
    await t.admin.createClientUser(t.clientId, otherOrg, otherUser);
    const account = await create(t);
    const url = `${v11}/${account.externalId}`;

    const withoutSecrets = await call('PUT', url, {
      apiKey: t.apiKey,
      body: portalAccountReplacementOf(account, { clientUserId: otherUser }),
    });
    expect(withoutSecrets.status).toBe(409);
    const withoutTotp = await call('PUT', url, {
      apiKey: t.apiKey,
      body: portalAccountReplacementOf(account, { clientUserId: otherUser, password: 'pw' }),
    });
    expect(withoutTotp.status).toBe(409);

    const moved = await call('PUT', url, {
      apiKey: t.apiKey,
      body: portalAccountReplacementOf(account, { clientUserId: otherUser, password: 'pw', totpSecret: null }),
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ organizationId: otherOrg, clientUserId: otherUser, totpSecretSet: false });
    const oldOrg = await call('GET', `${v11}/${t.clientUserId}/list`, { apiKey: t.apiKey });
    expect(oldOrg.body.items).toEqual([]);
    const newOrg = await call('GET', `${v11}/${otherUser}/list`, { apiKey: t.apiKey });
    expect(newOrg.body.items.map((a: any) => a.externalId)).toEqual([account.externalId]);
  });
});

describe('delete', () => {
  it('deletes (204); a stale If-Match is 412; afterwards the account is gone', async () => {
    const account = await create(tenant);
    const url = `${v11}/${account.externalId}`;
    const stale = await call('DELETE', url, { apiKey: tenant.apiKey, headers: { 'if-match': '"7"' } });
    expect(stale.status).toBe(412);
    const deleted = await call('DELETE', url, { apiKey: tenant.apiKey, headers: { 'if-match': '"1"' } });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call('GET', url, { apiKey: tenant.apiKey })).status).toBe(404);
    expect((await call('DELETE', url, { apiKey: tenant.apiKey })).status).toBe(404);
    const list = await call('GET', `${v11}/${tenant.clientUserId}/list?pageSize=100`, { apiKey: tenant.apiKey });
    expect(list.body.items.map((a: any) => a.externalId)).not.toContain(account.externalId);
  });
});

describe('tenant isolation', () => {
  it('answers 404 for another client’s account and organization, on every route', async () => {
    const owner = await newTenant('portal-accounts-owner');
    const intruder = await newTenant('portal-accounts-intruder');
    const account = await create(owner);
    const url = `${v11}/${account.externalId}`;
    const as = { apiKey: intruder.apiKey };
    expect((await call('GET', url, as)).status).toBe(404);
    expect(
      (
        await call('PUT', url, {
          ...as,
          body: portalAccountReplacementOf(account, { clientUserId: intruder.clientUserId }),
        })
      ).status,
    ).toBe(404);
    expect((await call('DELETE', url, as)).status).toBe(404);
    expect((await call('GET', `${v11}/${owner.clientUserId}/list`, as)).status).toBe(404);
    expect((await call('POST', `${v11}/filter`, { ...as, body: { clientUserId: owner.clientUserId } })).status).toBe(
      404,
    );
    // The intruder's own view is empty, and ids are per client: the same externalId is free for it.
    const own = await call('GET', `${v11}/${intruder.clientUserId}/list`, as);
    expect(own.body.items).toEqual([]);
    const same = await call('POST', v11, {
      ...as,
      body: accountBody(intruder.clientUserId, { externalId: account.externalId, username: 'intruder' }),
    });
    expect(same.status).toBe(201);
    expect((await call('GET', url, { apiKey: owner.apiKey })).body.username).toBe(account.username);
  });
});

describe('obsolete v1 Portals endpoints', () => {
  const deprecation = '@1741564800';
  const sunset = 'Thu, 01 Jul 2027 00:00:00 GMT';
  const expectDeprecated = (res: { headers: Headers }, successor: string) => {
    expect(res.headers.get('deprecation')).toBe(deprecation);
    expect(res.headers.get('sunset')).toBe(sunset);
    expect(res.headers.get('link')).toBe(`<${successor}>; rel="successor-version"`);
  };

  it('mirror v1.1 and answer with Deprecation, Sunset and a successor Link, on success and on errors', async () => {
    const as = { apiKey: tenant.apiKey };
    const body = accountBody(tenant.clientUserId);
    const created = await call('POST', v1, { ...as, body });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`${v1}/${body.externalId}`);
    expectDeprecated(created, v11);

    const read = await call('GET', `${v1}/${body.externalId}`, as);
    expect(read.status).toBe(200);
    expectDeprecated(read, `${v11}/${body.externalId}`);
    expect(read.body).toEqual((await call('GET', `${v11}/${body.externalId}`, as)).body);

    const replaced = await call('PUT', `${v1}/${body.externalId}`, {
      ...as,
      headers: { 'if-match': '"1"' },
      body: portalAccountReplacementOf(read.body, { displayName: 'via v1' }),
    });
    expect(replaced.status).toBe(200);
    expectDeprecated(replaced, `${v11}/${body.externalId}`);

    const stale = await call('PUT', `${v1}/${body.externalId}`, {
      ...as,
      headers: { 'if-match': '"1"' },
      body: portalAccountReplacementOf(read.body),
    });
    expect(stale.status).toBe(412);
    expectDeprecated(stale, `${v11}/${body.externalId}`);

    const list = await call('GET', `${v1}/${tenant.clientUserId}/list?pageSize=100`, as);
    expect(list.status).toBe(200);
    expect(list.body.items.map((a: any) => a.externalId)).toContain(body.externalId);
    expectDeprecated(list, `${v11}/${tenant.clientUserId}/list`);

    const filtered = await call('POST', `${v1}/filter`, {
      ...as,
      body: { clientUserId: tenant.clientUserId, search: 'VIA V1' },
    });
    expect(filtered.status).toBe(200);
    expect(filtered.body.items.map((a: any) => a.externalId)).toEqual([body.externalId]);
    expectDeprecated(filtered, `${v11}/filter`);

    const invalid = await call('POST', `${v1}/filter`, { ...as, body: {} });
    expect(invalid.status).toBe(400);
    expectDeprecated(invalid, `${v11}/filter`);

    const deleted = await call('DELETE', `${v1}/${body.externalId}`, as);
    expect(deleted.status).toBe(204);
    expectDeprecated(deleted, `${v11}/${body.externalId}`);
    const gone = await call('GET', `${v1}/${body.externalId}`, as);
    expect(gone.status).toBe(404);
    expectDeprecated(gone, `${v11}/${body.externalId}`);
  });

  it('v1.1 responses carry no deprecation headers', async () => {
    const res = await call('GET', `${v11}/${tenant.clientUserId}/list`, { apiKey: tenant.apiKey });
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.headers.get('sunset')).toBeNull();
    expect(res.headers.get('link')).toBeNull();
  });
});
