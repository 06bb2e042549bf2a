import { createHash } from 'node:crypto';

/*
 * The due schedule is spread over a few index partitions (lib/entities/recheck.ts), so that no one
 * partition takes every client's schedule writes; the dispatcher reads each.
 */

/** Enough to spread the writes, few enough to read each one every run of the dispatcher. */
export const RECHECK_SHARDS = 8;

/** The shard of a request's re-check: fixed by its ids, so a re-check stays in one partition. */
export const recheckShardOf = (clientId: string, externalId: string) =>
  String(createHash('sha256').update(`${clientId}\n${externalId}`).digest()[0]! % RECHECK_SHARDS);

export const recheckShards: readonly string[] = Array.from({ length: RECHECK_SHARDS }, (_, i) => String(i));
