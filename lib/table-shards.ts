import { createHash } from 'node:crypto';

/*
 * An index partition that every client writes to (the due re-checks, the pending outbox, the webhook retry
 * queue) takes about 1,000 writes a second on DynamoDB. Each such queue is spread over TABLE_SHARDS
 * partitions (`…#<shard>`) instead, and its reader queries every shard (lib/shard-merge.ts keeps the order).
 */

/** Enough to spread the writes (about 8,000 a second), few enough to read every shard at each poll. */
export const TABLE_SHARDS = 8;

/**
 * The shard of the item these ids name: a hash of them, so it is fixed for the item's life, and one client's
 * items spread as evenly as every client's (a byte mod 8: 256 is a multiple of 8, so no shard is favoured).
 */
export const shardOf = (...parts: string[]): string =>
  String(createHash('sha256').update(parts.join('\n')).digest()[0]! % TABLE_SHARDS);

export const tableShards: readonly string[] = Array.from({ length: TABLE_SHARDS }, (_, i) => String(i));
