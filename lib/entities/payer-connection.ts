import { attr, defineEntity } from './define-entity.ts';

/**
 * An organization's registration with a payer's API: the `client_id` the payer issued it (the port:
 * lib/payer-connections/payer-connection-store.ts; docs/payer-connections.md).
 *
 * `attention` is set by the automation, never by a client: the payer refused our client assertion, so
 * nothing is sent with the connection again until a client puts a new `clientId` or sets the status
 * back to `active` (as a refused portal login marks a portal account).
 */
export const PAYER_CONNECTION_STATUSES = ['active', 'attention', 'disabled'] as const;
export type PayerConnectionStatus = (typeof PAYER_CONNECTION_STATUSES)[number];

/** What a client may set: `attention` is the automation's. */
export type PayerConnectionWritableStatus = Exclude<PayerConnectionStatus, 'attention'>;

/**
 * Why a connection needs attention: the token endpoint's OAuth error code (RFC 6749 §5.2) that refused
 * our assertion, one of these (anything else the payer says is not stored: `invalid_client`).
 */
export const PAYER_CONNECTION_ATTENTION_REASONS = [
  'invalid_client',
  'unauthorized_client',
  'invalid_grant',
  'invalid_scope',
] as const;
export type PayerConnectionAttentionReason = (typeof PAYER_CONNECTION_ATTENTION_REASONS)[number];

export interface StoredPayerConnection {
  clientId: string;
  organizationId: string;
  externalId: string;
  /** The client user that last wrote the connection (it selects the organization). */
  clientUserId: string;
  /** A payer of the operators' directory (lib/entities/payer-endpoint.ts) when it was written. */
  payerId: string;
  /**
   * The client_id the payer issued the organization: the `iss` and `sub` of our client assertions. Not a
   * secret, but an identifier of the organization at the payer: never logged.
   */
  payerClientId: string;
  status: PayerConnectionStatus;
  /** `attention` only: why (PAYER_CONNECTION_ATTENTION_REASONS); null otherwise. */
  statusReason: PayerConnectionAttentionReason | null;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A payer connection, keyed by its own id (a read needs no organization), listed by organization in a
 * stable order (gsi1: `<createdAt>#<externalId>`, unique, never changes), and indexed by organization,
 * payer and status (gsi2, the same order): the channel choice's "the organization's active connection to
 * this payer" is one key condition, its first item (docs/data-model.md).
 */
export const payerConnectionEntity = defineEntity<StoredPayerConnection>()({
  name: 'PayerConnection',
  keys: {
    pk: 'CLIENT#<clientId>#PCONN#<externalId>',
    sk: 'PCONN',
    gsi1pk: 'CLIENT#<clientId>#ORG#<organizationId>#PCONN',
    gsi1sk: '<createdAt>#<externalId>',
    gsi2pk: 'CLIENT#<clientId>#ORG#<organizationId>#PCONN#PAYER#<payerId>#STATUS#<status>',
    gsi2sk: '<createdAt>#<externalId>',
  },
  attributes: {
    clientId: attr.string(),
    organizationId: attr.string(),
    externalId: attr.string(),
    clientUserId: attr.string(),
    payerId: attr.string(),
    payerClientId: attr.string(),
    status: attr.string<PayerConnectionStatus>(),
    statusReason: attr.nullAsAbsent(attr.string<PayerConnectionAttentionReason>()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
