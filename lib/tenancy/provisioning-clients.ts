import { randomUUID } from 'node:crypto';
import type { ClientLimitsRecord } from '#lib/entities/tenancy';
import { parseExpiresIn } from './api-keys.ts';
import { createApiKey } from './provisioning-api-keys.ts';
import { clientLimits } from './provisioning-settings.ts';
import type { TenantStore } from './tenant-store.ts';

/* Clients, their organizations and client users, as an operator creates (and offboards) them. */

export async function createClient(
  store: TenantStore,
  name: string,
  options: { clientId?: string; apiKey?: string; expiresIn?: string | undefined; limits?: ClientLimitsRecord } = {},
) {
  // Checked before anything is written, so a bad expiry or limit leaves no client without a key behind.
  if (options.expiresIn !== undefined) parseExpiresIn(options.expiresIn);
  const limits = clientLimits(options.limits ?? {});
  const clientId = options.clientId ?? randomUUID();
  const createdAt = new Date().toISOString();
  await store.putClient({ clientId, name, createdAt, ...limits });
  const { keyId, apiKey, expiresAt } = await createApiKey(store, clientId, options.apiKey, options);
  return { clientId, keyId, apiKey, ...(expiresAt ? { expiresAt } : {}), ...limits };
}

/**
 * Offboards a client: marks it deleted (so it gets no new keys), then revokes every key it has,
 * each with the deletion's time. Its data stays (docs/security.md, "Offboarding a client"). A repeated
 * run finishes what an interrupted one left and answers the same: `revokedKeys` counts the keys
 * revoked at `deletedAt`, by this run or an earlier one, not those revoked before.
 */
export async function deleteClient(store: TenantStore, clientId: string) {
  const client = await store.getClient(clientId);
  if (!client) throw new Error(`Unknown client ${clientId}`);
  let deletedAt = client.deletedAt;
  if (!deletedAt) {
    const now = new Date().toISOString();
    // A concurrent run may have marked it first: its time is the one that stands.
    deletedAt = (await store.markClientDeleted(clientId, now)) ? now : (await store.getClient(clientId))?.deletedAt;
    if (!deletedAt) throw new Error(`Unknown client ${clientId}`);
  }
  const keys = await store.listApiKeys(clientId);
  for (const key of keys) {
    if (!key.revokedAt) await store.revokeApiKey(key.keyHash, deletedAt);
  }
  const revokedKeys = keys.filter((key) => !key.revokedAt || key.revokedAt === deletedAt).length;
  return { clientId, deletedAt, revokedKeys };
}

export async function createOrganization(
  store: TenantStore,
  clientId: string,
  name: string,
  organizationId: string = randomUUID(),
) {
  if (!(await store.getClient(clientId))) throw new Error(`Unknown client ${clientId}`);
  await store.putOrganization({ clientId, organizationId, name, createdAt: new Date().toISOString() });
  return { organizationId };
}

export async function createClientUser(
  store: TenantStore,
  clientId: string,
  organizationId: string,
  clientUserId: string,
) {
  if (!(await store.getOrganization(clientId, organizationId))) {
    throw new Error(`Unknown organization ${organizationId} of client ${clientId}`);
  }
  await store.putClientUser({ clientId, clientUserId, organizationId, createdAt: new Date().toISOString() });
  return { clientId, organizationId, clientUserId };
}
