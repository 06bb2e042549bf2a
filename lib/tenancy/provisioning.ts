import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from './api-keys.ts';
import type { TenantStore } from './tenant-store.ts';

/**
 * Operator-side provisioning (admin CLI and the local seed). Not reachable through the API:
 * tenants are created by us, not by clients.
 */
export const provisioning = (store: TenantStore) => ({
  async createClient(name: string, options: { clientId?: string; apiKey?: string } = {}) {
    const clientId = options.clientId ?? randomUUID();
    const createdAt = new Date().toISOString();
    await store.putClient({ clientId, name, createdAt });
    const { apiKey } = await this.createApiKey(clientId, options.apiKey);
    return { clientId, apiKey };
  },

  async createApiKey(clientId: string, presetKey?: string) {
    if (!(await store.getClient(clientId))) throw new Error(`Unknown client ${clientId}`);
    const apiKey = presetKey ?? generateApiKey();
    const keyId = randomUUID();
    await store.putApiKey({ keyHash: hashApiKey(apiKey), keyId, clientId, createdAt: new Date().toISOString() });
    return { clientId, keyId, apiKey };
  },

  async revokeApiKey(apiKey: string) {
    const revoked = await store.revokeApiKey(hashApiKey(apiKey), new Date().toISOString());
    if (!revoked) throw new Error('Unknown API key');
    return { revoked: true };
  },

  async createOrganization(clientId: string, name: string, organizationId: string = randomUUID()) {
    if (!(await store.getClient(clientId))) throw new Error(`Unknown client ${clientId}`);
    await store.putOrganization({ clientId, organizationId, name, createdAt: new Date().toISOString() });
    return { organizationId };
  },

  async createClientUser(clientId: string, organizationId: string, clientUserId: string) {
    if (!(await store.getOrganization(clientId, organizationId))) {
      throw new Error(`Unknown organization ${organizationId} of client ${clientId}`);
    }
    await store.putClientUser({ clientId, clientUserId, organizationId, createdAt: new Date().toISOString() });
    return { clientId, organizationId, clientUserId };
  },
});
