import type {
  ApiKeyRecord,
  AutomationQuotasRecord,
  ClientLimitsRecord,
  ClientRecord,
  ClientUserRecord,
  OrganizationRecord,
  RecheckSettingsRecord,
  StorageQuotasRecord,
} from '#lib/entities/tenancy';

/** Port: clients (integration partners), their API keys, organizations and client users. */
export interface TenantStore {
  putClient(client: ClientRecord): Promise<void>;
  getClient(clientId: string): Promise<ClientRecord | undefined>;
  /** Every client's id, offboarded ones included (the client directory: an operator's read, never an API route's). */
  clientIds(): AsyncIterable<string>;
  /**
   * The client without its usageIdentifierKey (a projection: the automation's functions may read no more of a
   * client's partition); undefined when there is no such client.
   */
  getClientSettings(clientId: string): Promise<ClientRecord | undefined>;
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
   * token names (lib/runs/runs.ts). Read through an index, so a change is seen once it has reached it.
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
