import { type OutgoingHttpHeaders, request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_PROBLEMS, problemBody } from '#lib/http/gateway-responses';
import { baseUrl, call, newTenant, uniqueId } from '#test/support/api';
import { minimalRequest } from '#test/support/fixtures';

/**
 * Hostile request lines and header names, sent over raw HTTP (fetch would normalize or refuse
 * them): each one gets a 400 or a normal answer from the gateway, never a 5xx.
 */
interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

const target = new URL(baseUrl);

/** One request exactly as written: the path is not re-encoded, header names are sent as given. */
const raw = (method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: string) =>
  new Promise<RawResponse>((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => {
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode!, headers: res.headers, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });

/** Own properties named like Object.prototype's members, built so that none of them is lost. */
const named = (entries: Array<[string, string | string[]]>): OutgoingHttpHeaders =>
  Object.fromEntries(entries) as OutgoingHttpHeaders;

const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'valueOf', 'toString', 'hasOwnProperty', 'prototype'];

const v11 = '/api/external/v1.1';

const expectBadUrl = (res: RawResponse, label: string) => {
  expect(res.status, label).toBe(400);
  expect(res.headers['content-type'], label).toMatch(/^application\/problem\+json/);
  expect(res.body, label).toEqual(problemBody(GATEWAY_PROBLEMS.badRequest));
};

let tenant: Awaited<ReturnType<typeof newTenant>>;
let apiKey: string;
let existing: string;
beforeAll(async () => {
  tenant = await newTenant('hostile');
  apiKey = tenant.apiKey;
  existing = uniqueId('hostile');
  expect((await call('POST', `${v11}/Requests`, { apiKey, body: minimalRequest(existing) })).status).toBe(201);
});

describe('the gateway under hostile requests', () => {
  const malformed = ['%ZZ', '%C0%AF', '%ED%A0%80', '%', '%2', 'abc%', '%E2%82', '%FF', '%%41'];

  it('answers 400 problem details for a path that is not valid percent-encoded UTF-8, before authentication', async () => {
    for (const segment of malformed) {
      const path = `${v11}/Requests/${segment}`;
      expectBadUrl(await raw('GET', path, { 'x-api-key': apiKey }), path);
      // Refused as the request line it is: no key needed to learn that, and no route either.
      expectBadUrl(await raw('GET', path), `${path} without a key`);
      expectBadUrl(await raw('DELETE', `/no/such/route/${segment}`), `unrouted ${segment}`);
    }
    expectBadUrl(
      await raw('PUT', `${v11}/Requests/%C0%AF`, { 'x-api-key': apiKey, 'content-type': 'application/json' }, '{}'),
      'a PUT with a body',
    );
  });

  it('answers 400 for a malformed query name or value', async () => {
    for (const query of ['a=%ZZ', '%C0%AF=1', 'pageSize=%ED%A0%80', 'x=%', '%=1']) {
      const path = `${v11}/Portals/accounts/${tenant.clientUserId}/list?${query}`;
      expectBadUrl(await raw('GET', path, { 'x-api-key': apiKey }), path);
    }
  });

  it('still decodes well-formed escapes: an id sent percent-encoded is found', async () => {
    const id = uniqueId('enc:o@d');
    const encoded = encodeURIComponent(id).replace(/[.-]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    expect(encoded).toContain('%');
    const put = await raw(
      'PUT',
      `/api/external/v1/Requests/${encoded}`,
      { 'x-api-key': apiKey, 'content-type': 'application/json' },
      JSON.stringify(minimalRequest(id)),
    );
    expect(put.status, put.text).toBe(201);
    const got = await raw('GET', `${v11}/Requests/${encoded}`, { 'x-api-key': apiKey });
    expect(got.status, got.text).toBe(200);
    expect(got.body.externalId).toBe(id);
  });

  it('passes query names like __proto__ and constructor to the handler as plain data', async () => {
    const names = PROTOTYPE_NAMES.map((name) => `${name}=1`).join('&');
    const res = await raw('GET', `${v11}/Portals/accounts/${tenant.clientUserId}/list?${names}&pageSize=1`, {
      'x-api-key': apiKey,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.items).toEqual([]);
    // The real parameters among them are still read: pageSize is validated.
    const bad = await raw('GET', `${v11}/Portals/accounts/${tenant.clientUserId}/list?__proto__=1&pageSize=x`, {
      'x-api-key': apiKey,
    });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.succeeded).toBe(false);
    expect(bad.body.errors.join(' ')).toMatch(/^\/pageSize: Type error/);
    for (const name of PROTOTYPE_NAMES) {
      const one = await raw('GET', `${v11}/Requests/${existing}?${name}=1&${name}=2&${name}[a]=3`, {
        'x-api-key': apiKey,
      });
      expect(one.status, `${name}: ${one.text}`).toBe(200);
    }
  });

  it('answers normally to header names like __proto__ and constructor, and still reads the real headers', async () => {
    for (const name of PROTOTYPE_NAMES) {
      const got = await raw(
        'GET',
        `${v11}/Requests/${existing}`,
        named([
          ['x-api-key', apiKey],
          [name, 'x'],
        ]),
      );
      expect(got.status, `${name}: ${got.text}`).toBe(200);
      expect(got.body.externalId).toBe(existing);
      // Conditional GET: If-None-Match is found next to the hostile header (304), twice-sent names included.
      const cached = await raw(
        'GET',
        `${v11}/Requests/${existing}`,
        named([
          ['x-api-key', apiKey],
          [name, ['a', 'b']],
          ['if-none-match', got.headers.etag as string],
        ]),
      );
      expect(cached.status, name).toBe(304);
    }
    const all = named([['x-api-key', apiKey], ...PROTOTYPE_NAMES.map((name): [string, string] => [name, '{}'])]);
    const created = await raw(
      'POST',
      `${v11}/Requests`,
      { ...all, 'content-type': 'application/json' },
      JSON.stringify(minimalRequest(uniqueId('hostile-hdr'))),
    );
    expect(created.status, created.text).toBe(201);
    // The key is still the only credential: a hostile header does not stand in for it.
    const anonymous = await raw('GET', `${v11}/Requests/${existing}`, named([['__proto__', apiKey]]));
    expect(anonymous.status).toBe(401);
  });

  it('treats ids named like prototype members as ids', async () => {
    const created = await raw(
      'PUT',
      '/api/external/v1/Requests/constructor',
      { 'x-api-key': apiKey, 'content-type': 'application/json' },
      JSON.stringify(minimalRequest('constructor')),
    );
    expect([200, 201]).toContain(created.status);
    expect((await raw('GET', `${v11}/Requests/constructor`, { 'x-api-key': apiKey })).status).toBe(200);
    expect((await raw('GET', `${v11}/Requests/valueOf`, { 'x-api-key': apiKey })).status).toBe(404);
    // Not a valid id (starts with a symbol): the handler's 400.
    const proto = await raw('GET', `${v11}/Requests/__proto__`, { 'x-api-key': apiKey });
    expect(proto.status).toBe(400);
    expect(proto.body.detail).toMatch(/externalId/);
  });

  it('answers odd request targets without a 5xx', async () => {
    const paths = [
      `//${v11.slice(1)}/Schemas`,
      `http://elsewhere.example${v11}/Schemas`,
      `${v11}/Requests/%2e%2e/Schemas`,
      `${v11}/Requests/${existing}/%00`,
      `${v11}/Requests/%00`,
      `${v11}/Requests/${'%41'.repeat(2000)}`,
      `${v11}/Requests/${existing}?${'a=1&'.repeat(2000)}`,
    ];
    for (const path of paths) {
      const res = await raw('GET', path, { 'x-api-key': apiKey });
      expect(res.status, `${path.slice(0, 80)}: ${res.text}`).toBeLessThan(500);
      if (res.status >= 400) expect(res.headers['content-type'], path).toMatch(/^application\/problem\+json/);
    }
  });
});
