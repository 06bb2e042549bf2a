import { attr, defineEntity } from './define-entity.ts';

/** The tenants' records the declarations below store (the port: lib/tenancy/tenant-store.ts). */
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
 * A client's own storage quotas (docs/security.md, "Quotas"); STORAGE_QUOTA_DEFAULTS (lib/config/defaults.ts)
 * apply when absent.
 */
export interface StorageQuotasRecord {
  /** Most bytes of attachments (declared sizes) the client may keep. */
  attachmentBytesQuota?: number;
  /** Most portal accounts in any one organization of the client. */
  portalAccountsQuota?: number;
  /** Most payer connections in any one organization of the client. */
  payerConnectionsQuota?: number;
}

/**
 * A client's own automation quotas (lib/runs/automation-quotas.ts, docs/rpa.md "Bounded automation");
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

/*
 * Tenants: written whole by operators (a put is a creation, or a client user's move), so each item's
 * version and updatedAt are derived: 1 and its creation time. Revoking an API key, setting a
 * client's limits and deleting a client are the updates (they bump both); the authorizer's lastUsedAt
 * stamp is bookkeeping, not a change of the key, and leaves both alone.
 */
const created = {
  version: () => 1,
  updatedAt: (record: { createdAt: string }) => record.createdAt,
};

export const clientEntity = defineEntity<ClientRecord>()({
  name: 'Client',
  // gsi1: the directory of clients, one partition read by operators only (replay-events for every client).
  keys: { pk: 'CLIENT#<clientId>', sk: 'CLIENT', gsi1pk: 'CLIENTS', gsi1sk: '<clientId>' },
  attributes: {
    clientId: attr.string(),
    name: attr.string(),
    createdAt: attr.string(),
    rateLimit: attr.optional(attr.number()),
    burstLimit: attr.optional(attr.number()),
    quotaPerDay: attr.optional(attr.number()),
    attachmentBytesQuota: attr.optional(attr.number()),
    portalAccountsQuota: attr.optional(attr.number()),
    payerConnectionsQuota: attr.optional(attr.number()),
    automationRunsPerHour: attr.optional(attr.number()),
    automationRunsPerDay: attr.optional(attr.number()),
    automationRunsInFlight: attr.optional(attr.number()),
    rechecks: attr.optional(attr.string<'off'>()),
    recheckIntervalSeconds: attr.optional(attr.number()),
    usageIdentifierKey: attr.optional(attr.string()),
    deletedAt: attr.optional(attr.string()),
  },
  derived: created,
});

/**
 * A Client item's attributes but its usage plan key: what the automation reads of a client (its re-check
 * settings), by projection, and all IAM lets it read of a client's partition (TableAccess `clientSettings`).
 */
export const clientSettingsAttributes: readonly string[] = Object.entries(clientEntity.attributes)
  .map(([field, attribute]) => attribute.storedAs ?? field)
  .filter((name) => name !== 'usageIdentifierKey');

export const organizationEntity = defineEntity<OrganizationRecord>()({
  name: 'Organization',
  keys: { pk: 'CLIENT#<clientId>', sk: 'ORG#<organizationId>' },
  attributes: {
    clientId: attr.string(),
    organizationId: attr.string(),
    name: attr.string(),
    createdAt: attr.string(),
  },
  derived: created,
});

/** A client user belongs to exactly one organization. */
export const clientUserEntity = defineEntity<ClientUserRecord>()({
  name: 'ClientUser',
  keys: { pk: 'CLIENT#<clientId>', sk: 'USER#<clientUserId>' },
  attributes: {
    clientId: attr.string(),
    clientUserId: attr.string(),
    organizationId: attr.string(),
    createdAt: attr.string(),
  },
  derived: created,
});

/**
 * An API key, found by the SHA-256 of the presented key: the one key not under its client, since it
 * is how the authorizer finds the client. GSI1 lists a client's keys (listing, revocation by id).
 */
export const apiKeyEntity = defineEntity<ApiKeyRecord>()({
  name: 'ApiKey',
  keys: { pk: 'APIKEY#<keyHash>', sk: 'APIKEY', gsi1pk: 'CLIENT#<clientId>#APIKEYS', gsi1sk: '<keyId>' },
  attributes: {
    keyHash: attr.string(),
    keyId: attr.string(),
    clientId: attr.string(),
    createdAt: attr.string(),
    revokedAt: attr.optional(attr.string()),
    expiresAt: attr.optional(attr.string()),
    lastUsedAt: attr.optional(attr.string()),
    organizationId: attr.optional(attr.string()),
  },
  derived: created,
});
