import { randomUUID } from 'node:crypto';
import { apiKeyState, generateApiKey, hashApiKey, parseExpiresIn } from './api-keys.ts';
import type { TenantStore } from './tenant-store.ts';

/* A client's API keys as an operator sees them: created (shown once), listed by state, revoked. */

/**
 * A new key, shown once; with `expiresIn` (`90d`, `12h`) the authorizer refuses it from then on;
 * with `organizationId` it reaches only that organization of the client (scope.ts).
 */
export async function createApiKey(
  store: TenantStore,
  clientId: string,
  presetKey?: string,
  options: { expiresIn?: string | undefined; organizationId?: string | undefined } = {},
) {
  const lifetime = options.expiresIn === undefined ? undefined : parseExpiresIn(options.expiresIn);
  const client = await store.getClient(clientId);
  if (!client) throw new Error(`Unknown client ${clientId}`);
  if (client.deletedAt) throw new Error(`Client ${clientId} is deleted: it gets no new API keys`);
  const { organizationId } = options;
  if (organizationId !== undefined && !(await store.getOrganization(clientId, organizationId))) {
    throw new Error(`Unknown organization ${organizationId} of client ${clientId}`);
  }
  const apiKey = presetKey ?? generateApiKey();
  const keyId = randomUUID();
  const now = new Date();
  const expiresAt = lifetime === undefined ? undefined : new Date(now.getTime() + lifetime).toISOString();
  await store.putApiKey({
    keyHash: hashApiKey(apiKey),
    keyId,
    clientId,
    createdAt: now.toISOString(),
    expiresAt,
    ...(organizationId !== undefined ? { organizationId } : {}),
  });
  return {
    clientId,
    keyId,
    apiKey,
    ...(expiresAt ? { expiresAt } : {}),
    ...(organizationId !== undefined ? { organizationId } : {}),
  };
}

/** A client's keys, oldest first, with their state: never the key or its hash. */
export async function listApiKeys(store: TenantStore, clientId: string) {
  if (!(await store.getClient(clientId))) throw new Error(`Unknown client ${clientId}`);
  const now = new Date();
  const keys = (await store.listApiKeys(clientId)).sort(
    (a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId),
  );
  return {
    clientId,
    apiKeys: keys.map((key) => ({
      keyId: key.keyId,
      state: apiKeyState(key, now),
      createdAt: key.createdAt,
      lastUsedAt: key.lastUsedAt ?? null,
      expiresAt: key.expiresAt ?? null,
      revokedAt: key.revokedAt ?? null,
      organizationId: key.organizationId ?? null,
    })),
  };
}

/** Revokes one of a client's keys by its id (what list-api-keys and the access log show). */
export async function revokeApiKey(store: TenantStore, clientId: string, keyId: string) {
  const key = (await store.listApiKeys(clientId)).find((candidate) => candidate.keyId === keyId);
  if (!key || !(await store.revokeApiKey(key.keyHash, new Date().toISOString()))) {
    throw new Error(`Unknown API key ${keyId} of client ${clientId}`);
  }
  return { revoked: true, clientId, keyId };
}

/** Revokes a key by its value: for a leaked key whose id nobody has at hand. */
export async function revokeApiKeyByValue(store: TenantStore, apiKey: string) {
  const key = await store.findApiKey(hashApiKey(apiKey));
  if (!key || !(await store.revokeApiKey(key.keyHash, new Date().toISOString()))) {
    throw new Error('Unknown API key');
  }
  return { revoked: true, clientId: key.clientId, keyId: key.keyId };
}
