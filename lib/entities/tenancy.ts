import type { ApiKeyRecord, ClientRecord, ClientUserRecord, OrganizationRecord } from '#lib/tenancy/tenant-store';
import { attr, defineEntity } from './define-entity.ts';

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
  keys: { pk: 'CLIENT#<clientId>', sk: 'CLIENT' },
  attributes: {
    clientId: attr.string(),
    name: attr.string(),
    createdAt: attr.string(),
    rateLimit: attr.optional(attr.number()),
    burstLimit: attr.optional(attr.number()),
    quotaPerDay: attr.optional(attr.number()),
    attachmentBytesQuota: attr.optional(attr.number()),
    portalAccountsQuota: attr.optional(attr.number()),
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
