import type { ApiKeyRecord } from '#lib/entities/tenancy';
import { log } from '#lib/observability/logger';
import { apiKeyState, hashApiKey, LAST_USED_RESOLUTION_MS, looksLikeApiKey } from './api-keys.ts';
import type { TenantStore } from './tenant-store.ts';

/**
 * Records a use of `key` when its lastUsedAt is older than the resolution, never failing the
 * request: a lost race or a refused write only costs the stamp, and is logged. Awaited rather than
 * left running, since Lambda freezes the environment as soon as the authorizer answers.
 */
const recordUse = async (store: TenantStore, key: ApiKeyRecord, now: Date) => {
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS).toISOString();
  if (key.lastUsedAt && key.lastUsedAt >= staleBefore) return;
  try {
    await store.recordApiKeyUse(key.keyHash, now.toISOString(), staleBefore);
  } catch (error) {
    log.warn('api key use not recorded', { keyId: key.keyId, errorName: (error as Error).name });
  }
};

/**
 * The client and key an x-api-key value stands for (and the organization it is restricted to, if
 * any), if it is an active key; undefined is a 401.
 */
export const authenticate = async (
  store: TenantStore,
  presented: string | undefined,
  now = new Date(),
): Promise<{ clientId: string; keyId: string; organizationId?: string } | undefined> => {
  if (!looksLikeApiKey(presented)) return undefined;
  const key = await store.findApiKey(hashApiKey(presented));
  if (!key || apiKeyState(key, now) !== 'active') return undefined;
  await recordUse(store, key, now);
  return {
    clientId: key.clientId,
    keyId: key.keyId,
    ...(key.organizationId ? { organizationId: key.organizationId } : {}),
  };
};
