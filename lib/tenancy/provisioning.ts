import type {
  AutomationQuotasRecord,
  ClientLimitsRecord,
  RecheckSettingsRecord,
  StorageQuotasRecord,
} from '#lib/entities/tenancy';
import { createApiKey, listApiKeys, revokeApiKey, revokeApiKeyByValue } from './provisioning-api-keys.ts';
import { createClient, createClientUser, createOrganization, deleteClient } from './provisioning-clients.ts';
import { setAutomationQuotas, setClientLimits, setRecheckSettings, setStorageQuotas } from './provisioning-settings.ts';
import type { TenantStore } from './tenant-store.ts';

type ApiKeyOptions = { expiresIn?: string | undefined; organizationId?: string | undefined };
type ClientOptions = {
  clientId?: string;
  apiKey?: string;
  expiresIn?: string | undefined;
  limits?: ClientLimitsRecord;
};

/**
 * Operator-side provisioning (admin CLI and the local seed). Not reachable through the API: tenants are
 * created by us, not by clients. Each job in its module: clients, organizations and client users
 * (provisioning-clients.ts), API keys (provisioning-api-keys.ts), a client's settings (provisioning-settings.ts).
 */
export const provisioning = (store: TenantStore) => ({
  createClient: (name: string, options?: ClientOptions) => createClient(store, name, options),
  setClientLimits: (clientId: string, limits: ClientLimitsRecord) => setClientLimits(store, clientId, limits),
  setStorageQuotas: (clientId: string, quotas: StorageQuotasRecord) => setStorageQuotas(store, clientId, quotas),
  setAutomationQuotas: (clientId: string, quotas: AutomationQuotasRecord) =>
    setAutomationQuotas(store, clientId, quotas),
  setRecheckSettings: (clientId: string, settings: RecheckSettingsRecord) =>
    setRecheckSettings(store, clientId, settings),
  createApiKey: (clientId: string, presetKey?: string, options?: ApiKeyOptions) =>
    createApiKey(store, clientId, presetKey, options),
  listApiKeys: (clientId: string) => listApiKeys(store, clientId),
  revokeApiKey: (clientId: string, keyId: string) => revokeApiKey(store, clientId, keyId),
  revokeApiKeyByValue: (apiKey: string) => revokeApiKeyByValue(store, apiKey),
  deleteClient: (clientId: string) => deleteClient(store, clientId),
  createOrganization: (clientId: string, name: string, organizationId?: string) =>
    createOrganization(store, clientId, name, organizationId),
  createClientUser: (clientId: string, organizationId: string, clientUserId: string) =>
    createClientUser(store, clientId, organizationId, clientUserId),
});
