/**
 * Port: the re-check schedule (docs/rechecks.md). A request whose authorization is undecided has one
 * scheduled re-check, written with the change that made it undecided and removed with the one that
 * decides it (RequestStore.setAuthorization); the dispatcher reads the due ones and moves each on.
 */
export interface ScheduledRecheck {
  clientId: string;
  externalId: string;
  /** Which of the due index's partitions holds it (recheckShardOf): no one hot partition. */
  shard: string;
  /** When the authorization became undecided: re-checks stop 30 days after. */
  since: string;
  /** Re-checks started so far: the back-off's exponent. */
  checksDone: number;
  dueAt: string;
  /** On whose behalf the automation checks: the client user, organization and account of the run that read it. */
  clientUserId: string;
  organizationId: string;
  portalAccountId: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface RecheckStore {
  /**
   * At most `limit` of the shard's re-checks due at `upTo` or before, soonest first. No cursor: the
   * dispatcher moves each one it reads on (or ends it), so the next read starts with the rest.
   */
  due(shard: string, upTo: string, limit: number): Promise<ScheduledRecheck[]>;
  /** Moves the re-check on, if it is still as read (its version); false when it changed or is gone. */
  reschedule(recheck: ScheduledRecheck, next: { checksDone: number; dueAt: string; now: string }): Promise<boolean>;
  /** Removes the re-check, if it is still as read; false when it changed or is gone. */
  end(recheck: ScheduledRecheck): Promise<boolean>;
}
