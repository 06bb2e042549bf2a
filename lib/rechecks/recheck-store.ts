import type { ScheduledRecheck } from '#lib/entities/recheck';

/**
 * Port: the re-check schedule (docs/rechecks.md). A request whose authorization is undecided has one
 * scheduled re-check, written with the change that made it undecided and removed with the one that
 * decides it (RequestStore.setAuthorization); the dispatcher reads the due ones and moves each on.
 */
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
