import { shardOf, TABLE_SHARDS, tableShards } from '#lib/table-shards';

/*
 * The due schedule is spread over the table's shards (lib/table-shards.ts, lib/entities/recheck.ts), so that
 * no one partition takes every client's schedule writes; the dispatcher reads each.
 */

export const RECHECK_SHARDS = TABLE_SHARDS;

/** The shard of a request's re-check: fixed by its ids, so a re-check stays in one partition. */
export const recheckShardOf = (clientId: string, externalId: string) => shardOf(clientId, externalId);

export const recheckShards = tableShards;
