/** Port: clients (integration partners), their API keys, organizations and client users. */
export interface ApiKeyRecord {
  keyHash: string;
  keyId: string;
  clientId: string;
  createdAt: string;
  revokedAt?: string;
}

export interface ClientRecord {
  clientId: string;
  name: string;
  createdAt: string;
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
  putApiKey(key: ApiKeyRecord): Promise<void>;
  findApiKey(keyHash: string): Promise<ApiKeyRecord | undefined>;
  revokeApiKey(keyHash: string, revokedAt: string): Promise<boolean>;
  putOrganization(organization: OrganizationRecord): Promise<void>;
  getOrganization(clientId: string, organizationId: string): Promise<OrganizationRecord | undefined>;
  /** Creates or moves a client user; a client user belongs to exactly one organization. */
  putClientUser(user: ClientUserRecord): Promise<void>;
  getClientUser(clientId: string, clientUserId: string): Promise<ClientUserRecord | undefined>;
}
