import type {
  LastLogin,
  PortalAccountAttention,
  PortalAccountStatus,
  StoredPortalAccount,
} from '#lib/entities/portal-account';

/** Criteria applied while paging an organization's accounts. Text is already normalized. */
export interface PortalAccountCriteria {
  portalId?: string;
  payerId?: string;
  status?: PortalAccountStatus;
  /** Case-insensitive substring of the display name or the username (see normalizeSearchText). */
  search?: string;
}

export interface PageQuery {
  clientId: string;
  organizationId: string;
  criteria: PortalAccountCriteria;
  /** Exclusive start: a position returned as `next` by an earlier page; absent for the first page. */
  after?: string;
  /** Most items to return. */
  limit: number;
  /**
   * Most items to evaluate (read) before returning a short page; bounds what a filter the key
   * condition does not cover (payer, text) reads.
   */
  maxEvaluated: number;
}

export interface Page {
  items: StoredPortalAccount[];
  /** Where the next page starts, or undefined when the organization's accounts are exhausted. */
  next?: string;
  /** The read bound (`maxEvaluated`) ended the page before it was full: more may match after `next`. */
  partial: boolean;
}

/** Port: stored portal accounts. Secrets arrive here already sealed (lib/crypto/envelope.ts). */
export interface PortalAccountStore {
  get(clientId: string, externalId: string): Promise<StoredPortalAccount | undefined>;
  /** Throws VersionConflict (lib/concurrency.ts) when the externalId is taken within the client. */
  create(account: StoredPortalAccount): Promise<void>;
  /** Writes `account` if the stored version is still `expectedVersion`; else throws VersionConflict. */
  update(account: StoredPortalAccount, expectedVersion: number): Promise<void>;
  /** Deletes if the stored version is `expectedVersion`; throws VersionConflict otherwise (or if gone). */
  delete(clientId: string, externalId: string, expectedVersion: number): Promise<void>;
  /** An organization's accounts in a stable order (creation time, then externalId), filtered. */
  page(query: PageQuery): Promise<Page>;
  /**
   * The RPA worker's record of a login attempt: sets lastLogin (and, for a refused login, attention),
   * bumping version and updatedAt, in one atomic write whatever the stored version. False when the
   * account is gone.
   */
  setLastLogin(
    clientId: string,
    externalId: string,
    lastLogin: LastLogin,
    attention?: PortalAccountAttention,
  ): Promise<boolean>;
}
