import type { PayerConnectionAttentionReason, StoredPayerConnection } from '#lib/entities/payer-connection';

export interface PayerConnectionPageQuery {
  clientId: string;
  organizationId: string;
  /** Exclusive start: a position returned as `next` by an earlier page; absent for the first page. */
  after?: string;
  /** Most items to return. */
  limit: number;
}

export interface PayerConnectionPage {
  items: StoredPayerConnection[];
  /** Where the next page starts, or undefined when the organization's connections are exhausted. */
  next?: string;
}

export interface AttentionOptions {
  /**
   * The client_id the refused assertion was made for: a connection whose client_id changed since (the
   * client put a new one) is left as it is.
   */
  payerClientId?: string;
  /** When the payer refused it (now by default). */
  at?: string;
}

/** Port: stored payer connections (docs/payer-connections.md). */
export interface PayerConnectionStore {
  /** One connection by its id within the client (a consistent read). */
  get(clientId: string, externalId: string): Promise<StoredPayerConnection | undefined>;
  /**
   * The organization's active connection to the payer, the oldest when there are several; undefined when
   * it has none. Found by a key condition (organization, payer and status: docs/data-model.md), and read
   * again consistently, so a connection disabled or moved a moment ago is not returned.
   */
  findActive(clientId: string, organizationId: string, payerId: string): Promise<StoredPayerConnection | undefined>;
  /** Throws VersionConflict (lib/concurrency.ts) when the externalId is taken within the client. */
  create(connection: StoredPayerConnection): Promise<void>;
  /** Writes `connection` if the stored version is still `expectedVersion`; else throws VersionConflict. */
  update(connection: StoredPayerConnection, expectedVersion: number): Promise<void>;
  /** Deletes if the stored version is `expectedVersion`; throws VersionConflict otherwise (or if gone). */
  delete(clientId: string, externalId: string, expectedVersion: number): Promise<void>;
  /** An organization's connections in a stable order (creation time, then externalId). */
  page(query: PayerConnectionPageQuery): Promise<PayerConnectionPage>;
  /**
   * The automation's record that the payer refused our client assertion: status `attention` with the
   * reason, version and updatedAt bumped, whatever version is stored. False (nothing written) when the
   * connection is gone, disabled, or (with `payerClientId`) names another client_id by now.
   */
  markAttention(
    clientId: string,
    externalId: string,
    reason: PayerConnectionAttentionReason,
    options?: AttentionOptions,
  ): Promise<boolean>;
}
