import type { SealedSecret } from '#lib/crypto/sealed-secret';
import { attr, defineEntity } from './define-entity.ts';

/** A portal account's record, as portalAccountEntity stores it (the port: lib/portal-accounts/portal-account-store.ts). */
export type PortalAccountStatus = 'active' | 'disabled';

/** Written by the RPA worker after each portal login; null until the first one. */
export const LAST_LOGIN_RESULTS = ['succeeded', 'failed', 'locked', 'mfa_required'] as const;

export interface LastLogin {
  result: (typeof LAST_LOGIN_RESULTS)[number];
  at: string;
}

/**
 * Set by the RPA worker when the portal refused the account's credentials: no automation logs in
 * with it again until a client puts new credentials or sets its status to `active` (docs/rpa.md,
 * "No lockouts"). Another login would lock the customer's real account.
 */
export const ATTENTION_REASONS = ['wrong_password', 'account_locked', 'mfa_required'] as const;

export interface PortalAccountAttention {
  reason: (typeof ATTENTION_REASONS)[number];
  since: string;
  /** The run whose login was refused. */
  runId: string;
}

export interface StoredPortalAccount {
  clientId: string;
  organizationId: string;
  externalId: string;
  /** The client user that last wrote the account (it selects the organization). */
  clientUserId: string;
  portalId: string;
  payerIds: string[];
  displayName: string;
  username: string;
  status: PortalAccountStatus;
  lastLogin: LastLogin | null;
  attention: PortalAccountAttention | null;
  password: SealedSecret;
  passwordChangedAt: string;
  totpSecret: SealedSecret | null;
  /** When the TOTP secret was last set or removed; null if it never was. */
  totpSecretChangedAt: string | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** Lower case, Unicode-normalized: what search matches against. */
export const normalizeSearchText = (text: string) => text.normalize('NFKC').toLowerCase();

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

/** How many characters (code points) a search index entry holds: searches this long or longer use it. */
const SEARCH_GRAM_LENGTH = 3;

/** A UTF-16 half of a character without its other half (a search may hold one; no key can). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The distinct trigrams (3 code points each) of the given normalized texts. A search is a substring
 * of a text only if each of its own trigrams is one of the text's: so the accounts that have a given
 * trigram of the search hold every match. Code points, not UTF-16 units: a key must be valid UTF-8.
 */
export const searchGramsOf = (...texts: readonly string[]) => {
  const grams = new Set<string>();
  for (const text of texts) {
    const points = Array.from(text);
    for (let i = 0; i + SEARCH_GRAM_LENGTH <= points.length; i++) {
      const gram = points.slice(i, i + SEARCH_GRAM_LENGTH).join('');
      // No well-formed search holds one of these: it need not (and as a key cannot) be indexed.
      if (!LONE_SURROGATE.test(gram)) grams.add(gram);
    }
  }
  return [...grams];
};

/** The trigrams of a normalized search, or undefined when it is too short or not well-formed Unicode. */
export const searchGramsOfQuery = (search: string) =>
  !LONE_SURROGATE.test(search) && Array.from(search).length >= SEARCH_GRAM_LENGTH ? searchGramsOf(search) : undefined;

/** One trigram of an account's search text: the account's entry in the search index (below). */
export interface PortalAccountGram {
  clientId: string;
  organizationId: string;
  externalId: string;
  gram: string;
  /** The account's normalized texts, when this entry was written: the index query filters on them. */
  displayNameSearch: string;
  usernameSearch: string;
  createdAt: string;
  /** The account's, when this entry was written: an older write never overwrites a newer one. */
  version: number;
  updatedAt: string;
}

/**
 * The search index (docs/data-model.md, patterns 40–41): each distinct trigram of an account's normalized
 * display name and username has an item in the account's item collection, indexed in gsi2 beside the
 * portal and payer partitions (`…#GRAM#<gram>`, the account's order). A search of 3 characters or more
 * reads the partition of one of its trigrams (the one whose first entries match best), filtered on the
 * copies, then the accounts it names.
 */
export const portalAccountGramEntity = defineEntity<PortalAccountGram>()({
  name: 'PortalAccountGram',
  keys: {
    pk: 'CLIENT#<clientId>#PACC#<externalId>',
    sk: 'GRAM#<gram>',
    gsi2pk: 'CLIENT#<clientId>#ORG#<organizationId>#PACC#GRAM#<gram>',
    gsi2sk: '<createdAt>#<externalId>',
  },
  attributes: {
    clientId: attr.string(),
    organizationId: attr.string(),
    externalId: attr.string(),
    gram: attr.string(),
    displayNameSearch: attr.string(),
    usernameSearch: attr.string(),
    createdAt: attr.string(),
    version: attr.number(),
    updatedAt: attr.string(),
  },
});
