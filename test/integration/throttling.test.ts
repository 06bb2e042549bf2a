import { describe, expect, it } from 'vitest';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { provisioning } from '#lib/tenancy/provisioning';
import { call, newTenant } from '#test/support/api';

const admin = provisioning(dynamoTenantStore);
const schemas = (apiKey: string) => call('GET', '/api/external/v1.1/Schemas', { apiKey });
const throttled = {
  type: 'about:blank',
  title: 'Too Many Requests',
  status: 429,
  detail: 'The request rate limit was exceeded.',
};

describe('per-client throttling at the gateway (token bucket per client)', () => {
  it('refuses a client past its own burst with 429 and Retry-After, leaves others alone, and refills', async () => {
    // One request a second, two at once: six together cannot all pass.
    const limited = await admin.createClient('throttled client', { limits: { rateLimit: 1, burstLimit: 2 } });
    const other = await newTenant('unthrottled');

    const responses = await Promise.all(Array.from({ length: 6 }, () => schemas(limited.apiKey)));
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(2);
    const refused = responses.filter((res) => res.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const res of refused) {
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toEqual(throttled);
      expect(res.headers.get('retry-after')).toBe('1');
    }

    // The same moment, another client is within its (default) limits.
    const others = await Promise.all(Array.from({ length: 6 }, () => schemas(other.apiKey)));
    expect(others.map((res) => res.status)).toEqual(Array(6).fill(200));

    // After Retry-After, the bucket has a token again.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await schemas(limited.apiKey)).status).toBe(200);
  });

  it('throttles by client, not by key: two keys of one client share its bucket', async () => {
    const limited = await admin.createClient('one bucket', { limits: { rateLimit: 1, burstLimit: 1 } });
    const second = await admin.createApiKey(limited.clientId);
    const statuses = (await Promise.all([schemas(limited.apiKey), schemas(second.apiKey)])).map((res) => res.status);
    expect(statuses.sort()).toEqual([200, 429]);
  });

  it('checks the key before the limit: an unknown key is 401, never 429', async () => {
    const res = await schemas('srk_thisKeyWasNeverIssuedToAnybodyAtAll');
    expect(res.status).toBe(401);
  });
});
