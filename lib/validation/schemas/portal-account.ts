import { PORTAL_IDS } from '#lib/portal-accounts/portal-registry';
import { DRAFT, identifier, paging, payerIdentifier, text } from './common.ts';

/**
 * Portal accounts: credentials for a payer portal, per organization (docs/portal-accounts.md).
 * Secrets (password, totpSecret) are writeOnly: they are envelope-encrypted before storage, never
 * returned, and a validation error about them never quotes their value (error-text.ts).
 */
const portalId = {
  type: 'string',
  enum: PORTAL_IDS,
  description: 'A known payer portal (the portal registry); sandbox is the project’s sandbox portal',
} as const;

const payerId = payerIdentifier('A payer id the account serves (e.g. a clearinghouse payer id)');

const status = { type: 'string', enum: ['active', 'disabled'], description: 'disabled: automation must not use it' };

/** Paging, the same on the filter body and the list query. */
const { pageSize, cursor } = paging;

const password = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  writeOnly: true,
  description: 'The portal password; write-only',
} as const;

const TOTP_PATTERN = '^[A-Za-z2-7]{16,128}=*$';
const totpDescription = 'Base32 TOTP seed (16 to 128 characters); write-only';

const fields = {
  externalId: identifier("The client's id of this portal account"),
  clientUserId: identifier('A client user of the organization the account belongs to'),
  portalId,
  payerIds: { type: 'array', maxItems: 50, uniqueItems: true, items: payerId },
  displayName: text(100, 'Defaults to the portal name'),
  username: text(128, 'The portal username: returned to the client, never logged'),
  password,
  totpSecret: { type: 'string', pattern: TOTP_PATTERN, writeOnly: true, description: totpDescription },
  status,
} as const;

/** Body of POST …/Portals/accounts. */
export const portalAccountSchema = {
  $schema: DRAFT,
  $id: 'PortalAccount',
  title: 'PortalAccount',
  type: 'object',
  additionalProperties: false,
  required: ['externalId', 'clientUserId', 'portalId', 'username', 'password'],
  properties: fields,
} as const;

/**
 * Body of PUT …/Portals/accounts/{externalId}: replaces every non-secret field. Secrets are
 * optional (omitted → unchanged); `totpSecret: null` removes the TOTP secret. `version` is an
 * alternative to If-Match.
 */
export const portalAccountReplacementSchema = {
  $schema: DRAFT,
  $id: 'PortalAccountReplacement',
  title: 'PortalAccountReplacement',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId', 'portalId', 'username'],
  properties: {
    ...fields,
    totpSecret: {
      type: ['string', 'null'],
      pattern: TOTP_PATTERN,
      writeOnly: true,
      description: `${totpDescription}; null removes it`,
    },
    version: { type: 'integer', minimum: 1, description: 'The version this write replaces (like If-Match)' },
  },
} as const;

/** Body of POST …/Portals/accounts/filter: criteria (all optional but clientUserId) and paging. */
export const portalAccountFilterSchema = {
  $schema: DRAFT,
  $id: 'PortalAccountFilter',
  title: 'PortalAccountFilter',
  type: 'object',
  additionalProperties: false,
  required: ['clientUserId'],
  properties: {
    clientUserId: identifier('Selects the organization whose accounts are listed'),
    portalId,
    payerId,
    search: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      pattern: '\\S',
      description: 'Case-insensitive text in the display name or the username',
    },
    status,
    pageSize,
    cursor,
  },
} as const;

/**
 * Query of GET …/Portals/accounts/{clientUserId}/list: the filter's paging without criteria. Query
 * values are strings: the handler reads a numeric pageSize as a number first, so a bad page size is
 * worded as on the filter body. Other query parameters are ignored, as query strings usually are.
 */
export const portalAccountListQuerySchema = {
  $schema: DRAFT,
  $id: 'PortalAccountListQuery',
  title: 'PortalAccountListQuery',
  type: 'object',
  properties: { pageSize, cursor },
} as const;
