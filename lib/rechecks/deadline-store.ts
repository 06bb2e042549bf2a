import type { AuthorizationChange } from '#lib/entities/authorization-history';
import type { DecisionDeadline } from '#lib/entities/decision-deadline';
import type { ServiceEvent } from '#lib/entities/service-event';

/**
 * Port: the decision deadlines under watch (docs/payer-api.md, "Decision deadlines"). A request with a
 * deadline and no decision has one, written with the change that records the deadline and removed with the
 * one that decides it (RequestStore.setAuthorization); the dispatcher reads the passed ones and fires each.
 */
export interface DeadlineStore {
  /** At most `limit` of the shard's deadlines at `upTo` or before, soonest first (each read is fired or ended). */
  due(shard: string, upTo: string, limit: number): Promise<DecisionDeadline[]>;
  /**
   * In one transaction: removes the deadline if it is still as read, and writes the history entry and the
   * event that say it passed. False when it changed or is gone (it fired, or the request was decided): nothing.
   */
  fire(
    deadline: DecisionDeadline,
    passed: { entry: AuthorizationChange; event: ServiceEvent<'authorization.decision_overdue'> },
  ): Promise<boolean>;
  /** Removes it, if still as read, with nothing to tell (the request is gone or decided). */
  end(deadline: DecisionDeadline): Promise<void>;
}
