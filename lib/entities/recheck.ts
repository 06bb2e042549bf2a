import { attr, defineEntity } from './define-entity.ts';

/**
 * What a re-check runs through: the portal account or the payer connection of the run that read the
 * undecided status (docs/rechecks.md, "On whose behalf").
 */
export type RecheckThrough =
  | { channel: 'portal'; portalAccountId: string }
  | { channel: 'pas'; payerConnectionId: string };

/** A scheduled re-check, the record recheckEntity stores (the port: lib/rechecks/recheck-store.ts). */
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
  /** On whose behalf the automation checks: the client user and organization of the run that read it. */
  clientUserId: string;
  organizationId: string;
  /**
   * The reading run's channel, with its portal account or its payer connection (the other id absent).
   * An item written before the channel was kept has none, and its `portalAccountId` holds whichever of
   * the two ids the run had: lib/rechecks/recheck-through.ts reads it by the request's channel.
   */
  channel?: RecheckThrough['channel'];
  portalAccountId?: string;
  payerConnectionId?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * A request's scheduled re-check (docs/rechecks.md), in the request's item collection; it exists while
 * the authorization is undecided. gsi1 holds the due order, spread over RECHECK_SHARDS partitions
 * (`RECHECKS#<shard>`) so no one partition takes every client's writes: the dispatcher queries each
 * shard for what is due (no Scan).
 */
export const recheckEntity = defineEntity<ScheduledRecheck>()({
  name: 'Recheck',
  keys: {
    pk: 'CLIENT#<clientId>#REQ#<externalId>',
    sk: 'RECHECK',
    gsi1pk: 'RECHECKS#<shard>',
    gsi1sk: '<dueAt>#<clientId>#<externalId>',
  },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    shard: attr.string(),
    since: attr.string(),
    checksDone: attr.number(),
    dueAt: attr.string(),
    clientUserId: attr.string(),
    organizationId: attr.string(),
    channel: attr.optional(attr.string<RecheckThrough['channel']>()),
    portalAccountId: attr.optional(attr.string()),
    payerConnectionId: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
