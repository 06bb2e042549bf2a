/** Port: clients (integration partners), their API keys, organizations and client users. */
export interface ApiKeyRecord {
  keyHash: string;
  keyId: string;
  clientId: string;
  createdAt: string;
  revokedAt?: string;
  /** Refused by the authorizer from this instant on; no expiry when absent. */
  expiresAt?: string;
  /** When the authorizer last accepted it, to within LAST_USED_RESOLUTION_MS (api-keys.ts). */
  lastUsedAt?: string;
  /** Restricts the key to this organization of its client (scope.ts); the whole client when absent. */
  organizationId?: string;
}

/** A client's own throttle and quota (docs/security.md, "Throttling and quotas"); the defaults apply when absent. */
export interface ClientLimitsRecord {
  /** Steady requests per second. */
  rateLimit?: number;
  /** Requests allowed at once above the steady rate. */
  burstLimit?: number;
  /** Requests per UTC day (usage plan quota on AWS). */
  quotaPerDay?: number;
}

/**
 * A client's own storage quotas (docs/security.md, "Quotas"); STORAGE_QUOTA_DEFAULTS (lib/config.ts)
 * apply when absent.
 */
export interface StorageQuotasRecord {
  /** Most bytes of attachments (declared sizes) the client may keep. */
  attachmentBytesQuota?: number;
  /** Most portal accounts in any one organization of the client. */
  portalAccountsQuota?: number;
}

/**
 * A client's own automation quotas (lib/rpa/automation-quotas.ts, docs/rpa.md "Bounded automation");
 * the defaults apply when absent.
 */
export interface AutomationQuotasRecord {
  automationRunsPerHour?: number;
  automationRunsPerDay?: number;
  automationRunsInFlight?: number;
}

/** A client's scheduled re-checks (docs/rechecks.md); on, with the default first interval, when absent. */
export interface RecheckSettingsRecord {
  rechecks?: 'off';
  /** The first back-off step, in seconds (lib/rechecks/recheck-policy.ts bounds it). */
  recheckIntervalSeconds?: number;
}

export interface ClientRecord
  extends ClientLimitsRecord,
    StorageQuotasRecord,
    AutomationQuotasRecord,
    RecheckSettingsRecord {
  clientId: string;
  name: string;
  createdAt: string;
  /**
   * The value of the client's API Gateway API key, which the authorizer returns as usageIdentifierKey so
   * that the usage plan meters the client. An identifier for metering, not a credential: API Gateway
   * takes keys from the authorizer only (apiKeySourceType AUTHORIZER), never from a request.
   */
  usageIdentifierKey?: string;
  /**
   * When the client was offboarded (`delete-client`): its keys are revoked and no new ones are made.
   * Its data stays (docs/security.md, "Offboarding a client").
   */
  deletedAt?: string;
}

export interface OrganizationRecord {
  clientId: string;
  organizationId: string;
  name: string;
  createdAt: string;
}

export interface ClientUserRecord {
  clientId: string;
  clientUserId: string;
  organizationId: string;
  createdAt: string;
}

export interface TenantStore {
  putClient(client: ClientRecord): Promise<void>;
  getClient(clientId: string): Promise<ClientRecord | undefined>;
  /**
   * The client's usageIdentifierKey alone (a projection: the authorizer may read no other attribute of
   * a client's items); undefined when it has none or there is no such client.
   */
  getUsageIdentifierKey(clientId: string): Promise<string | undefined>;
  /** Stores the client's usage plan key (AWS); false when there is no such client. */
  setUsageIdentifierKey(clientId: string, usageIdentifierKey: string): Promise<boolean>;
  /** Sets deletedAt unless it is set already; false when there is no such client or it was deleted before. */
  markClientDeleted(clientId: string, deletedAt: string): Promise<boolean>;
  /** Replaces a client's limits (absent fields are removed); false when there is no such client. */
  setClientLimits(clientId: string, limits: ClientLimitsRecord): Promise<boolean>;
  /** Replaces a client's storage quotas (absent fields are removed); false when there is no such client. */
  setStorageQuotas(clientId: string, quotas: StorageQuotasRecord): Promise<boolean>;
  /** Replaces a client's automation quotas (absent fields are removed); false when there is no such client. */
  setAutomationQuotas(clientId: string, quotas: AutomationQuotasRecord): Promise<boolean>;
  /** Replaces the client's re-check settings; false when there is no such client. */
  setRecheckSettings(clientId: string, settings: RecheckSettingsRecord): Promise<boolean>;
  putApiKey(key: ApiKeyRecord): Promise<void>;
  findApiKey(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** Every key of a client, revoked and expired ones included. */
  listApiKeys(clientId: string): Promise<ApiKeyRecord[]>;
  /**
   * One key of a client by its id (revoked and expired ones included), in one read: what a scraper
   * token names (lib/rpa/rpa.ts). Read through an index, so a change is seen once it has reached it.
   */
  getApiKeyById(clientId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
  revokeApiKey(keyHash: string, revokedAt: string): Promise<boolean>;
  /**
   * Sets lastUsedAt to `usedAt` unless it is already at or after `staleBefore`: a conditional write,
   * so concurrent authorizers record one use per window. False when another got there first.
   */
  recordApiKeyUse(keyHash: string, usedAt: string, staleBefore: string): Promise<boolean>;
  putOrganization(organization: OrganizationRecord): Promise<void>;
  getOrganization(clientId: string, organizationId: string): Promise<OrganizationRecord | undefined>;
  /** Creates or moves a client user; a client user belongs to exactly one organization. */
  putClientUser(user: ClientUserRecord): Promise<void>;
  getClientUser(clientId: string, clientUserId: string): Promise<ClientUserRecord | undefined>;
}
