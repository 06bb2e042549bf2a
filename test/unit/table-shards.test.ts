import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recheckShardOf, recheckShards } from '#lib/rechecks/recheck-shards';
import { firstInOrder, type PageReader } from '#lib/shard-merge';
import { shardOf, TABLE_SHARDS, tableShards } from '#lib/table-shards';

/*
 * The shards of the table's shared queues (lib/table-shards.ts) and the merge that reads them as one
 * (lib/shard-merge.ts), against partitions held in memory and read a page at a time as DynamoDB does.
 */

/** How many of `ids` fall in each shard, per shard in order. */
const counts = (shards: string[]) => tableShards.map((shard) => shards.filter((s) => s === shard).length);

describe('shardOf', () => {
  it('is one of the 8 shards, fixed by the ids: an item stays where it was written', () => {
    expect(tableShards).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    expect(TABLE_SHARDS).toBe(8);
    // Pinned (sha256 of the ids joined by a newline, first byte mod 8, as Python's hashlib gives it): a change
    // of the hash would move every item written before it to another partition.
    expect([shardOf('c1', 'R1'), shardOf('c1', 'evt_1'), shardOf('c1', 'w1', 'd1')]).toEqual(['4', '1', '4']);
    expect(shardOf('c1', 'R1')).toBe(shardOf('c1', 'R1'));
    // The ids are kept apart: `a\nb` + `c` is not `a` + `b\nc`, nor their concatenation.
    expect(shardOf('client', 'x')).not.toBe(shardOf('clientx'));
  });

  it('keeps the re-checks where they were: the same hash as their own shard function had', () => {
    expect(recheckShards).toBe(tableShards);
    for (let i = 0; i < 50; i++) expect(recheckShardOf('c1', `R${i}`)).toBe(shardOf('c1', `R${i}`));
  });

  it('spreads many clients’ items within 10% of the mean, and one client’s just as well', () => {
    const many = Array.from({ length: 8000 }, (_, i) => shardOf(`client-${i % 1000}`, `evt_${i}`));
    const one = Array.from({ length: 8000 }, (_, i) => shardOf('one-busy-client', `evt_${i}`));
    for (const spread of [counts(many), counts(one)]) {
      for (const count of spread) {
        expect(count).toBeGreaterThan(900);
        expect(count).toBeLessThan(1100);
      }
    }
  });
});

/** Partitions in memory, read like a Query: at most `limit` items after `start`, `next` while more may follow. */
const memoryPartitions = (partitions: Record<string, string[]>) => {
  const reads: Array<{ partition: string; limit: number }> = [];
  const read: PageReader<string, number> = async (partition, limit, start = 0) => {
    reads.push({ partition, limit });
    const sorted = [...(partitions[partition] ?? [])].sort();
    const items = sorted.slice(start, start + limit);
    // As DynamoDB: a full page has a LastEvaluatedKey, even when nothing follows it.
    return { items, ...(items.length === limit ? { next: start + limit } : {}) };
  };
  return { read, reads };
};

const key = (item: string) => item;

describe('firstInOrder: several sorted partitions read as one', () => {
  it('gives the oldest `limit` of all partitions, in order, whatever their sizes and the page limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 120 }),
        fc.array(fc.nat({ max: 8 }), { minLength: 120, maxLength: 120 }),
        fc.integer({ min: 1, max: 60 }),
        async (keys, placement, limit) => {
          const names = ['0', '1', '2', '3', '4', '5', '6', '7', 'legacy'];
          const partitions: Record<string, string[]> = Object.fromEntries(names.map((name) => [name, []]));
          for (const [i, k] of keys.entries()) partitions[names[placement[i]!]!]!.push(k);
          const { read } = memoryPartitions(partitions);
          expect(await firstInOrder(names, limit, read, key)).toEqual([...keys].sort().slice(0, limit));
        },
      ),
    );
  });

  it('reads every partition’s head at once, so one with a backlog hides no older item of another', async () => {
    const backlog = Array.from({ length: 100 }, (_, i) => `2026-03-01T00:${String(i).padStart(2, '0')}`);
    const { read, reads } = memoryPartitions({
      full: backlog,
      quiet: ['2026-03-01T00:05:30'],
      empty: [],
    });
    const batch = await firstInOrder(['full', 'quiet', 'empty'], 25, read, key);
    expect(batch).toHaveLength(25);
    expect(batch[6]).toBe('2026-03-01T00:05:30');
    expect(batch).toEqual([...batch].sort());
    // One round: each partition's first 25 hold all it can give.
    expect(reads).toEqual([
      { partition: 'full', limit: 25 },
      { partition: 'quiet', limit: 25 },
      { partition: 'empty', limit: 25 },
    ]);
  });

  it('reads on a partition whose page came back short (DynamoDB’s 1 MB), for what is still wanted', async () => {
    const items = Array.from({ length: 30 }, (_, i) => `a${String(i).padStart(2, '0')}`);
    const reads: Array<{ partition: string; limit: number }> = [];
    // Pages of at most 4 items, with a cursor while more follow.
    const read: PageReader<string, number> = async (partition, limit, start = 0) => {
      reads.push({ partition, limit });
      const source = partition === 'big' ? items : ['b'];
      const page = source.slice(start, start + Math.min(limit, 4));
      return { items: page, ...(start + page.length < source.length ? { next: start + page.length } : {}) };
    };
    expect(await firstInOrder(['big', 'small'], 10, read, key)).toEqual([...items.slice(0, 10)]);
    expect(reads.slice(0, 2)).toEqual([
      { partition: 'big', limit: 10 },
      { partition: 'small', limit: 10 },
    ]);
    expect(reads.slice(2)).toEqual([
      { partition: 'big', limit: 6 },
      { partition: 'big', limit: 2 },
    ]);
  });

  it('takes a newer item of a quiet partition as soon as the older ones are gone: none is starved', async () => {
    const relayed: string[] = [];
    const pending = { full: ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'], quiet: ['b'] };
    // Batches of 2, each taken off its partition, as the relay marks what it handed over.
    for (let round = 0; round < 4; round++) {
      const batch = await firstInOrder(['full', 'quiet'], 2, memoryPartitions(pending).read, key);
      relayed.push(...batch);
      pending.full = pending.full.filter((item) => !batch.includes(item));
      pending.quiet = pending.quiet.filter((item) => !batch.includes(item));
    }
    expect(relayed).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'b']);
    expect(await firstInOrder(['full', 'quiet'], 0, memoryPartitions(pending).read, key)).toEqual([]);
  });
});
