import type { ScheduledRecheck } from '#lib/rechecks/recheck-store';
import { attr, defineEntity } from './define-entity.ts';

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
    portalAccountId: attr.string(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
