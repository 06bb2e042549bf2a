import { randomUUID } from 'node:crypto';
import type {
  AutomationQuotasRecord,
  ClientLimitsRecord,
  RecheckSettingsRecord,
  StorageQuotasRecord,
} from '#lib/entities/tenancy';
import { CLIENT_INTERVAL_BOUNDS, isClientInterval } from '#lib/rechecks/recheck-policy';
import { apiKeyState, generateApiKey, hashApiKey, parseExpiresIn } from './api-keys.ts';
import type { TenantStore } from './tenant-store.ts';

/**
 * Bounds of a client's own limits: API Gateway's default account-level throttle (10,000 requests per
 * second, burst 5,000) caps what one client could get anyway; the quota bound is a typo guard.
 */
const CLIENT_LIMIT_BOUNDS = {
  rateLimit: { min: 1, max: 10_000 },
  burstLimit: { min: 1, max: 5_000 },
  quotaPerDay: { min: 1, max: 100_000_000 },
} as const;

/**
 * A client's limits, checked: whole numbers within CLIENT_LIMIT_BOUNDS, rate and burst together (one
 * alone would pair with a default that may not fit it). Throws a message fit for an operator.
 */
const clientLimits = (limits: ClientLimitsRecord): ClientLimitsRecord => {
  if ((limits.rateLimit === undefined) !== (limits.burstLimit === undefined)) {
    throw new Error('A rate limit and a burst limit go together: give both.');
  }
  if (limits.quotaPerDay !== undefined && limits.rateLimit === undefined) {
    throw new Error('A daily quota needs a rate limit and a burst limit too.');
  }
  for (const field of ['rateLimit', 'burstLimit', 'quotaPerDay'] as const) {
    const value = limits[field];
    const { min, max } = CLIENT_LIMIT_BOUNDS[field];
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) {
      throw new Error(`${field} must be a whole number from ${min} to ${max}.`);
    }
  }
  return Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
};

/** Bounds of a client's own storage quotas: typo guards (a petabyte of attachments, a million accounts). */
const STORAGE_QUOTA_BOUNDS = {
  attachmentBytesQuota: { min: 1, max: 1_000_000_000_000_000 },
  portalAccountsQuota: { min: 1, max: 1_000_000 },
} as const;

/** A client's storage quotas, checked: whole numbers within STORAGE_QUOTA_BOUNDS, either or both. */
const storageQuotas = (quotas: StorageQuotasRecord): StorageQuotasRecord => {
  for (const field of ['attachmentBytesQuota', 'portalAccountsQuota'] as const) {
    const value = quotas[field];
    const { min, max } = STORAGE_QUOTA_BOUNDS[field];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= min && value <= max)) {
      throw new Error(`${field} must be a whole number from ${min} to ${max}.`);
    }
  }
  return Object.fromEntries(Object.entries(quotas).filter(([, value]) => value !== undefined));
};

/** Bounds of a client's automation quotas (set-automation-quotas): 0 stops the client's automation. */
const AUTOMATION_QUOTA_MAX = 1_000_000;

/** The quotas given, checked: whole numbers from 0 to AUTOMATION_QUOTA_MAX; absent ones left out. */
const automationQuotas = (quotas: AutomationQuotasRecord): AutomationQuotasRecord => {
  for (const [field, value] of Object.entries(quotas)) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0 && value <= AUTOMATION_QUOTA_MAX)) {
      throw new Error(`${field} must be a whole number from 0 to ${AUTOMATION_QUOTA_MAX}.`);
    }
  }
  return Object.fromEntries(Object.entries(quotas).filter(([, value]) => value !== undefined));
};

/**
 * Operator-side provisioning (admin CLI and the local seed). Not reachable through the API:
 * tenants are created by us, not by clients.
 */
export const provisioning = (store: TenantStore) => ({
  async createClient(
    name: string,
    options: { clientId?: string; apiKey?: string; expiresIn?: string | undefined; limits?: ClientLimitsRecord } = {},
  ) {
    // Checked before anything is written, so a bad expiry or limit leaves no client without a key behind.
    if (options.expiresIn !== undefined) parseExpiresIn(options.expiresIn);
    const limits = clientLimits(options.limits ?? {});
    const clientId = options.clientId ?? randomUUID();
    const createdAt = new Date().toISOString();
    await store.putClient({ clientId, name, createdAt, ...limits });
    const { keyId, apiKey, expiresAt } = await this.createApiKey(clientId, options.apiKey, options);
    return { clientId, keyId, apiKey, ...(expiresAt ? { expiresAt } : {}), ...limits };
  },

  /** Replaces a client's own limits; without any, the client is back on the defaults. */
  async setClientLimits(clientId: string, limits: ClientLimitsRecord) {
    const checked = clientLimits(limits);
    if (!(await store.setClientLimits(clientId, checked))) throw new Error(`Unknown client ${clientId}`);
    return { clientId, ...checked };
  },

  /**
   * Replaces a client's own storage quotas; a quota not given is back at its default. Lowering one
   * below what the client stores deletes nothing: only new uploads and accounts are refused.
   */
  async setStorageQuotas(clientId: string, quotas: StorageQuotasRecord) {
    const checked = storageQuotas(quotas);
    if (!(await store.setStorageQuotas(clientId, checked))) throw new Error(`Unknown client ${clientId}`);
    return { clientId, ...checked };
  },

  /** Replaces a client's own automation quotas; a quota not given is back at its default. */
  async setAutomationQuotas(clientId: string, quotas: AutomationQuotasRecord) {
    const checked = automationQuotas(quotas);
    if (!(await store.setAutomationQuotas(clientId, checked))) throw new Error(`Unknown client ${clientId}`);
    return { clientId, ...checked };
  },

  /**
   * Turns a client's scheduled re-checks off, or on with its own first interval (or the default when
   * none is given): docs/rechecks.md. Off pauses them; on again, the schedules kept meanwhile go on.
   */
  async setRecheckSettings(clientId: string, settings: RecheckSettingsRecord) {
    const seconds = settings.recheckIntervalSeconds;
    if (settings.rechecks === 'off' && seconds !== undefined)
      throw new Error('Re-checks that are off take no interval.');
    if (seconds !== undefined && !isClientInterval(seconds)) {
      const { min, max } = CLIENT_INTERVAL_BOUNDS;
      throw new Error(`The re-check interval must be a whole number of seconds from ${min} to ${max}.`);
    }
    if (!(await store.setRecheckSettings(clientId, settings))) throw new Error(`Unknown client ${clientId}`);
    return {
      clientId,
      rechecks: settings.rechecks === 'off' ? 'off' : 'on',
      ...(seconds ? { recheckIntervalSeconds: seconds } : {}),
    };
  },

  /**
   * A new key, shown once; with `expiresIn` (`90d`, `12h`) the authorizer refuses it from then on;
   * with `organizationId` it reaches only that organization of the client (scope.ts).
   */
  async createApiKey(
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
  },

  /** A client's keys, oldest first, with their state: never the key or its hash. */
  async listApiKeys(clientId: string) {
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
  },

  /** Revokes one of a client's keys by its id (what list-api-keys and the access log show). */
  async revokeApiKey(clientId: string, keyId: string) {
    const key = (await store.listApiKeys(clientId)).find((candidate) => candidate.keyId === keyId);
    if (!key || !(await store.revokeApiKey(key.keyHash, new Date().toISOString()))) {
      throw new Error(`Unknown API key ${keyId} of client ${clientId}`);
    }
    return { revoked: true, clientId, keyId };
  },

  /** Revokes a key by its value: for a leaked key whose id nobody has at hand. */
  async revokeApiKeyByValue(apiKey: string) {
    const key = await store.findApiKey(hashApiKey(apiKey));
    if (!key || !(await store.revokeApiKey(key.keyHash, new Date().toISOString()))) {
      throw new Error('Unknown API key');
    }
    return { revoked: true, clientId: key.clientId, keyId: key.keyId };
  },

  /**
   * Offboards a client: marks it deleted (so it gets no new keys), then revokes every key it has,
   * each with the deletion's time. Its data stays (docs/security.md, "Offboarding a client"). A repeated
   * run finishes what an interrupted one left and answers the same: `revokedKeys` counts the keys
   * revoked at `deletedAt`, by this run or an earlier one, not those revoked before.
   */
  async deleteClient(clientId: string) {
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
