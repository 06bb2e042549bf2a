/*
 * The first items of several sorted partitions, as if they were one: a k-way merge of their heads, each
 * partition read a page at a time (lib/aws/sharded-query.ts reads the table's shards with it). Every
 * partition's head is read at every call, so a partition with a backlog cannot hide another's older items,
 * and none waits longer than the items older than its own: oldest first across all, and fair.
 */

/** One page of a partition, in sort order; `next` when more may follow (DynamoDB's LastEvaluatedKey). */
interface Page<T, Cursor> {
  items: T[];
  next?: Cursor;
}

/** Reads at most `limit` items of `partition` after `start` (from its beginning when undefined). */
export type PageReader<T, Cursor> = (partition: string, limit: number, start?: Cursor) => Promise<Page<T, Cursor>>;

interface Head<T, Cursor> {
  partition: string;
  items: T[];
  taken: number;
  next?: Cursor;
}

/** The head with the lowest sort key, among those with an item read and not taken. */
const lowest = <T, Cursor>(heads: Head<T, Cursor>[], keyOf: (item: T) => string) => {
  let best: Head<T, Cursor> | undefined;
  for (const head of heads) {
    if (head.taken === head.items.length) continue;
    if (!best || keyOf(head.items[head.taken]!) < keyOf(best.items[best.taken]!)) best = head;
  }
  return best;
};

/**
 * The `limit` items with the lowest sort keys (`keyOf`) across `partitions`, in order. Each partition is read
 * for `limit` items, all at once: its first `limit` hold every one of its items that can be among the result,
 * so one round of reads is enough (more items read than kept, but one Query's latency, not one per partition
 * that runs out). A partition whose page came back short (DynamoDB stops a page at 1 MB) with more behind it is
 * read on, for what is still wanted, before its next item can be compared.
 */
export async function firstInOrder<T, Cursor>(
  partitions: readonly string[],
  limit: number,
  read: PageReader<T, Cursor>,
  keyOf: (item: T) => string,
): Promise<T[]> {
  if (limit <= 0 || partitions.length === 0) return [];
  const heads: Head<T, Cursor>[] = await Promise.all(
    partitions.map(async (partition) => ({ partition, taken: 0, ...(await read(partition, limit)) })),
  );
  const merged: T[] = [];
  while (merged.length < limit) {
    const dry = heads.filter((head) => head.taken === head.items.length && head.next !== undefined);
    await Promise.all(
      dry.map(async (head) => {
        const page = await read(head.partition, limit - merged.length, head.next);
        Object.assign(head, { items: page.items, taken: 0, next: page.next });
      }),
    );
    const head = lowest(heads, keyOf);
    if (!head) break;
    merged.push(head.items[head.taken++]!);
  }
  return merged;
}
