import type { AuthorizationChange } from '#lib/entities/authorization-history';
import type { DecisionDeadline } from '#lib/entities/decision-deadline';
import type { ScheduledRecheck } from '#lib/entities/recheck';
import type { Authorization, StoredRequest } from '#lib/entities/request';
import type { ServiceEvent } from '#lib/entities/service-event';

/** Port: stored requests. */
export interface RequestStore {
  get(clientId: string, externalId: string): Promise<StoredRequest | undefined>;
  /** Writes version 1; throws VersionConflict when the request exists. */
  create(request: StoredRequest): Promise<void>;
  /** Writes `request` (whose version is the previous one + 1) if the stored version is still `request.version - 1`. */
  update(request: StoredRequest): Promise<void>;
  /**
   * Replaces the document in one atomic write whatever the stored version (last writer wins, versions
   * still count every write); creates the request unless `mustExist`. Returns the stored result, or
   * undefined when `mustExist` and there is no such request.
   */
  putDocument(
    clientId: string,
    externalId: string,
    document: Record<string, unknown>,
    options: { mustExist: boolean; initialAuthorization: Authorization; now: string },
  ): Promise<StoredRequest | undefined>;
  /**
   * Sets the authorization alone (the automation's status check), bumping version and updatedAt and
   * leaving the document as it is, if the request is still at the version it was read at; throws
   * VersionConflict otherwise (changed since, or gone). A change of status, number or decision date
   * is written with its history entry, its event and what it does to the re-check schedule, in one
   * transaction: all or none.
   */
  setAuthorization(write: AuthorizationWrite): Promise<void>;
}

interface AuthorizationWrite {
  clientId: string;
  externalId: string;
  authorization: Authorization;
  /** The request's version when it was read. */
  version: number;
  now: string;
  /** The decision deadline's watch it starts (it recorded one) or ends (it decided the request), in its transaction. */
  deadline?: { start: DecisionDeadline } | { end: true };
  change?: {
    entry: AuthorizationChange;
    /** `authorization.status_changed` when the decision changed, `authorization.information_requested` when a new request for information came. */
    events: ServiceEvent[];
    /** The re-checks it starts (it made the authorization undecided) or ends (it decided it): docs/rechecks.md. */
    recheck?: { start: ScheduledRecheck } | { end: true };
  };
}
