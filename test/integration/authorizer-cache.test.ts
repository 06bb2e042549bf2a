import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_LIMITS } from '#lib/http/gateway-responses';
import { authorizerCacheTtlFromEnv } from '#local/gateway/authorizer-cache';
import { newTenant } from '#test/support/api';
import { startInProcessGateway } from '#test/support/in-process-gateway';

/**
 * The local gateway's authorizer cache, as API Gateway's resultsCacheTtl: gateways of their own (on the
 * shared stack's emulators), one keeping answers for 1 s and one keeping none.
 */
const gateways: Array<{ close(): Promise<void> }> = [];
const gateway = async (authorizerCacheTtlSeconds: number) => {
  const started = await startInProcessGateway({ authorizerCacheTtlSeconds });
  gateways.push(started);
  const url = `${started.baseUrl}/api/external/v1.1/Schemas`;
  return async (apiKey: string) => (await fetch(url, { headers: { 'x-api-key': apiKey } })).status;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('local gateway: authorizer cache', () => {
  let tenant: Awaited<ReturnType<typeof newTenant>>;
  beforeAll(async () => {
    tenant = await newTenant('authorizer-cache');
  });
  afterAll(async () => {
    for (const started of gateways) await started.close();
  });

  it('with a TTL, a revoked key keeps working until the TTL ends, then gets 401', async () => {
    // 2 s rather than 1: revoking (one write) must fit in it on a loaded machine.
    const get = await gateway(2);
    const { keyId, apiKey } = await tenant.admin.createApiKey(tenant.clientId);
    expect(await get(apiKey)).toBe(200);
    await tenant.admin.revokeApiKey(tenant.clientId, keyId);
    expect(await get(apiKey)).toBe(200);
    await sleep(2100);
    expect(await get(apiKey)).toBe(401);
  });

  it('with 0, a revoked key is refused at once', async () => {
    const get = await gateway(0);
    const { keyId, apiKey } = await tenant.admin.createApiKey(tenant.clientId);
    expect(await get(apiKey)).toBe(200);
    await tenant.admin.revokeApiKey(tenant.clientId, keyId);
    expect(await get(apiKey)).toBe(401);
  });

  it('keeps no refusal: a key is asked about again after a 401', async () => {
    const get = await gateway(60);
    const apiKey = `srk_${randomBytes(24).toString('base64url')}`;
    expect(await get(apiKey)).toBe(401);
    await tenant.admin.createApiKey(tenant.clientId, apiKey);
    expect(await get(apiKey)).toBe(200);
  });

  it('reads LOCAL_AUTHORIZER_CACHE_TTL: whole seconds from 0 to 3600, the deployed value when unset', () => {
    expect(authorizerCacheTtlFromEnv({})).toBe(GATEWAY_LIMITS.authorizerCacheTtlSeconds);
    expect(authorizerCacheTtlFromEnv({ LOCAL_AUTHORIZER_CACHE_TTL: '0' })).toBe(0);
    expect(authorizerCacheTtlFromEnv({ LOCAL_AUTHORIZER_CACHE_TTL: '5' })).toBe(5);
    for (const bad of ['-1', '1.5', 'soon', '3601']) {
      expect(() => authorizerCacheTtlFromEnv({ LOCAL_AUTHORIZER_CACHE_TTL: bad })).toThrow(
        'LOCAL_AUTHORIZER_CACHE_TTL must be whole seconds from 0 to 3600',
      );
    }
  });
});
