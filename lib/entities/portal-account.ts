import type { SealedSecret } from '#lib/crypto/envelope';
import {
  type LastLogin,
  normalizeSearchText,
  type PortalAccountAttention,
  type PortalAccountStatus,
  type StoredPortalAccount,
} from '#lib/portal-accounts/portal-account-store';
import { attr, defineEntity } from './define-entity.ts';

/**
 * A portal account, keyed by its own id (a read needs no organization) and indexed by organization
 * in a stable order: `<createdAt>#<externalId>` is unique and never changes (docs/portal-accounts.md).
 * gsi2–gsi4 hold the same order within one portal, one status, one portal and status: a filter on
 * them is a key condition, so its cost does not grow with the organization (docs/data-model.md).
 */
export const portalAccountEntity = defineEntity<StoredPortalAccount>()({
  name: 'PortalAccount',
  keys: {
    pk: 'CLIENT#<clientId>#PACC#<externalId>',
    sk: 'PACC',
    gsi1pk: 'CLIENT#<clientId>#ORG#<organizationId>#PACC',
    gsi1sk: '<createdAt>#<externalId>',
    gsi2pk: 'CLIENT#<clientId>#ORG#<organizationId>#PACC#PORTAL#<portalId>',
    gsi2sk: '<createdAt>#<externalId>',
    gsi3pk: 'CLIENT#<clientId>#ORG#<organizationId>#PACC#STATUS#<status>',
    gsi3sk: '<createdAt>#<externalId>',
    gsi4pk: 'CLIENT#<clientId>#ORG#<organizationId>#PACC#PORTAL#<portalId>#STATUS#<status>',
    gsi4sk: '<createdAt>#<externalId>',
  },
  attributes: {
    clientId: attr.string(),
    organizationId: attr.string(),
    externalId: attr.string(),
    clientUserId: attr.string(),
    portalId: attr.string(),
    payerIds: attr.absentAs(attr.list<string>(), () => []),
    displayName: attr.string(),
    username: attr.string(),
    status: attr.string<PortalAccountStatus>(),
    lastLogin: attr.nullAsAbsent(attr.map<LastLogin>()),
    attention: attr.nullAsAbsent(attr.map<PortalAccountAttention>()),
    // Secrets arrive sealed and are stored only as their envelopes.
    password: attr.storedAs('passwordEnvelope', attr.map<SealedSecret>()),
    passwordChangedAt: attr.string(),
    totpSecret: attr.storedAs('totpSecretEnvelope', attr.nullAsAbsent(attr.map<SealedSecret>())),
    totpSecretChangedAt: attr.nullAsAbsent(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
  // Normalized copies that filters match case-insensitively.
  derived: {
    displayNameSearch: (account) => normalizeSearchText(account.displayName),
    usernameSearch: (account) => normalizeSearchText(account.username),
  },
});

/** One payer a portal account serves: the account's entry in the payer index (below). */
export interface PortalAccountPayer {
  clientId: string;
  organizationId: string;
  externalId: string;
  payerId: string;
  /** The account's, when this entry was last written. */
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A portal account serves many payers, and an index keys an item by one value: so each payer of an
 * account has an item of its own, in the account's item collection, indexed in gsi2 beside the
 * portal partitions (`…#PAYER#<payerId>`, the account's order). A filter by payer reads these, then
 * the accounts (BatchGetItem), and skips an entry its account no longer agrees with.
 */
export const portalAccountPayerEntity = defineEntity<PortalAccountPayer>()({
  name: 'PortalAccountPayer',
  keys: {
    pk: 'CLIENT#<clientId>#PACC#<externalId>',
    sk: 'PAYER#<payerId>',
    gsi2pk: 'CLIENT#<clientId>#ORG#<organizationId>#PACC#PAYER#<payerId>',
    gsi2sk: '<createdAt>#<externalId>',
  },
  attributes: {
    clientId: attr.string(),
    organizationId: attr.string(),
    externalId: attr.string(),
    payerId: attr.string(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
