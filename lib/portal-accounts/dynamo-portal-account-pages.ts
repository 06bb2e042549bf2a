import { setTimeout } from 'node:timers/promises';
import { BatchGetCommand, type BatchGetCommandOutput, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import {
  normalizeSearchText,
  portalAccountEntity,
  portalAccountGramEntity,
  portalAccountPayerEntity,
  type StoredPortalAccount,
  searchGramsOfQuery,
} from '#lib/entities/portal-account';
import { GSI1, GSI2, GSI3, GSI4, TABLE_KEY } from '#lib/table';
import type { Page, PageQuery } from './portal-account-store.ts';

/*
 * Pages of an organization's accounts. Items and keys are declared in lib/entities/portal-account.ts.
 * Every index pages accounts in the same stable order (sort key `<createdAt>#<externalId>`), so a
 * position is valid on any of them.
 */
const { fromItem, keys } = portalAccountEntity;

type Criteria = PageQuery['criteria'];

/**
 * Without a payer (readByPayer): the index and partition whose key condition covers the most
 * criteria: portal and status together, either one, or the whole organization (docs/data-model.md,
 * patterns 10 and 19–21). What the key condition does not cover (text) is left to the FilterExpression.
 */
const keyConditionOf = (clientId: string, organizationId: string, criteria: Criteria) => {
  const { portalId, status, ...rest } = criteria;
  if (portalId !== undefined && status !== undefined) {
    return { index: GSI4, partition: keys.gsi4pk.render({ clientId, organizationId, portalId, status }), rest };
  }
  if (portalId !== undefined) {
    return { index: GSI2, partition: keys.gsi2pk.render({ clientId, organizationId, portalId }), rest };
  }
  if (status !== undefined) {
    return { index: GSI3, partition: keys.gsi3pk.render({ clientId, organizationId, status }), rest };
  }
  return { index: GSI1, partition: keys.gsi1pk.render({ clientId, organizationId }), rest };
};

/** FilterExpression for the text no key condition covers (applied by DynamoDB after Limit: see page()). */
const filterOf = ({ search }: Pick<Criteria, 'search'>) =>
  search === undefined
    ? { expression: '', values: {} }
    : {
        expression: '(contains(displayNameSearch, :search) OR contains(usernameSearch, :search))',
        values: { ':search': search },
      };

/** The accounts of these partition keys, by partition key (BatchGetItem: at most 100 keys a call). */
const accountsByKey = async (pks: readonly string[]) => {
  const found = new Map<string, Record<string, unknown>>();
  const sk = portalAccountEntity.keys.sk.render({});
  for (let i = 0; i < pks.length; i += 100) {
    let keys: Record<string, unknown>[] | undefined = pks
      .slice(i, i + 100)
      .map((pk) => ({ [TABLE_KEY.partition]: pk, [TABLE_KEY.sort]: sk }));
    for (let attempt = 0; keys?.length; attempt++) {
      // DynamoDB may leave keys unprocessed under load: ask again for those, after a growing pause.
      if (attempt > 0) await setTimeout(Math.min(25 * 2 ** attempt, 1_000));
      const out: BatchGetCommandOutput = await dynamo.send(
        new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: keys } } }),
      );
      for (const item of out.Responses?.[tableName()] ?? []) found.set(String(item[TABLE_KEY.partition]), item);
      keys = out.UnprocessedKeys?.[tableName()]?.Keys;
    }
  }
  return found;
};

/** The criteria a payer-index read checks on the accounts it reads (the FilterExpression's, in code). */
const matchesInCode = (account: StoredPortalAccount, organizationId: string, criteria: Criteria) =>
  account.organizationId === organizationId &&
  (criteria.payerId === undefined || account.payerIds.includes(criteria.payerId)) &&
  (criteria.portalId === undefined || account.portalId === criteria.portalId) &&
  (criteria.status === undefined || account.status === criteria.status) &&
  (criteria.search === undefined ||
    normalizeSearchText(account.displayName).includes(criteria.search) ||
    normalizeSearchText(account.username).includes(criteria.search));

/**
 * One query of a page's read: the matching account items in order, how many items it read, and the
 * position of the last one (undefined: the partition has no more).
 */
interface Read {
  /** Whether matches may be sparse among the items read (then queries read full batches). */
  filtered: boolean;
  next(
    after: string | undefined,
    limit: number,
  ): Promise<{ matches: Record<string, unknown>[]; evaluated: number; last?: string }>;
}

const keyConditionExpression = (after: string | undefined) => (after ? '#pk = :pk AND #sk > :after' : '#pk = :pk');

/** Portal, status, both or neither: the key condition of keyConditionOf, the rest a FilterExpression. */
const readByIndex = ({ clientId, organizationId, criteria }: PageQuery): Read => {
  const { index, partition, rest } = keyConditionOf(clientId, organizationId, criteria);
  const filter = filterOf(rest);
  const filtered = filter.expression !== '';
  return {
    filtered,
    next: async (after, limit) => {
      const out = await dynamo.send(
        new QueryCommand({
          TableName: tableName(),
          IndexName: index.name,
          KeyConditionExpression: keyConditionExpression(after),
          ...(filtered ? { FilterExpression: filter.expression } : {}),
          ExpressionAttributeNames: { '#pk': index.partition, ...(after ? { '#sk': index.sort } : {}) },
          ExpressionAttributeValues: { ':pk': partition, ...(after ? { ':after': after } : {}), ...filter.values },
          Limit: limit,
        }),
      );
      const last = out.LastEvaluatedKey?.[index.sort];
      return {
        matches: out.Items ?? [],
        evaluated: out.ScannedCount ?? 0,
        ...(last !== undefined ? { last: String(last) } : {}),
      };
    },
  };
};

/**
 * The accounts index entries name (payer or search entries: the account's pk, its position), those
 * that are still the account the entry was written for (not one re-created under its id since) and
 * match every criterion: what the entries do not say is checked here, in code.
 */
const accountsOfEntries = async (entries: Record<string, unknown>[], organizationId: string, criteria: Criteria) => {
  const accounts = await accountsByKey(entries.map((entry) => String(entry[TABLE_KEY.partition])));
  return entries.flatMap((entry) => {
    const item = accounts.get(String(entry[TABLE_KEY.partition]));
    if (!item || !portalAccountEntity.matches(item) || item[GSI1.sort] !== entry[GSI2.sort]) return [];
    return matchesInCode(fromItem(item), organizationId, criteria) ? [item] : [];
  });
};

/** One query of a gsi2 partition of index entries, from a position: the entries, their positions. */
const queryEntries = async (partition: string, after: string | undefined, limit: number, filter = filterOf({})) => {
  const out = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: GSI2.name,
      KeyConditionExpression: keyConditionExpression(after),
      ...(filter.expression ? { FilterExpression: filter.expression } : {}),
      ProjectionExpression: '#account, #position',
      ExpressionAttributeNames: {
        '#pk': GSI2.partition,
        ...(after ? { '#sk': GSI2.sort } : {}),
        '#account': TABLE_KEY.partition,
        '#position': GSI2.sort,
      },
      ExpressionAttributeValues: { ':pk': partition, ...(after ? { ':after': after } : {}), ...filter.values },
      Limit: limit,
    }),
  );
  const last = out.LastEvaluatedKey?.[GSI2.sort];
  return {
    entries: out.Items ?? [],
    evaluated: out.ScannedCount ?? 0,
    ...(last !== undefined ? { last: String(last) } : {}),
  };
};

/** A payer's entries in the payer index, then their accounts; the other criteria are checked in code. */
const readByPayer = ({ clientId, organizationId, criteria }: PageQuery): Read => {
  const partition = portalAccountPayerEntity.keys.gsi2pk.render({
    clientId,
    organizationId,
    payerId: criteria.payerId!,
  });
  return {
    filtered: criteria.portalId !== undefined || criteria.status !== undefined || criteria.search !== undefined,
    next: async (after, limit) => {
      const { entries, ...rest } = await queryEntries(partition, after, limit);
      return { matches: await accountsOfEntries(entries, organizationId, criteria), ...rest };
    },
  };
};

/** Trigrams a search's first read weighs, at most, spread over it (one Query each, in parallel). */
const MAX_WEIGHED = 4;

/** The first, the last and evenly between: a name's rare part is often at one end (a number, a place). */
const weighedGrams = (grams: readonly string[]) => {
  const count = Math.min(grams.length, MAX_WEIGHED);
  const step = count > 1 ? (grams.length - 1) / (count - 1) : 0;
  return [...new Set(Array.from({ length: count }, (_, i) => grams[Math.round(i * step)]!))];
};

/**
 * A search of 3 characters or more (pattern 40): every match has each of the search's trigrams, so
 * the partition of any one holds them all. The first read queries up to 4 of them at once and keeps
 * the one that tells most: a partition read to its end (it holds every match), else the one whose
 * entries matched most often (the rarest trigram's entries are mostly matches); the others' reads are
 * dropped. Then that partition only, from the position reached: the same order as every index.
 * Entries are filtered on their copies of the texts (FilterExpression), then their accounts read and
 * checked against every criterion.
 */
const readBySearch = ({ clientId, organizationId, criteria }: PageQuery, grams: readonly string[]): Read => {
  const filter = filterOf(criteria);
  const partitionOf = (gram: string) => portalAccountGramEntity.keys.gsi2pk.render({ clientId, organizationId, gram });
  let partition: string | undefined;
  const first = async (after: string | undefined, limit: number) => {
    // Together no more than the read asked for (the per-request bound holds).
    const weighed = weighedGrams(grams).slice(0, Math.max(limit, 1));
    const each = Math.max(Math.floor(limit / weighed.length), 1);
    const probes = await Promise.all(
      weighed.map(async (gram) => ({ gram, read: await queryEntries(partitionOf(gram), after, each, filter) })),
    );
    const score = ({ read }: (typeof probes)[number]) =>
      read.last === undefined ? Number.POSITIVE_INFINITY : read.entries.length / Math.max(read.evaluated, 1);
    const best = probes.reduce((a, b) => (score(b) > score(a) ? b : a));
    partition = partitionOf(best.gram);
    // The bound counts every entry the probes read.
    return { ...best.read, evaluated: probes.reduce((sum, probe) => sum + probe.read.evaluated, 0) };
  };
  return {
    filtered: true,
    next: async (after, limit) => {
      const { entries, ...rest } =
        partition === undefined ? await first(after, limit) : await queryEntries(partition, after, limit, filter);
      return { matches: await accountsOfEntries(entries, organizationId, criteria), ...rest };
    },
  };
};

/**
 * Which read answers a page: a search's trigram entries (they hold only its matches, whatever the
 * organization's size), else a payer's entries, else the index whose key condition covers the most.
 * A search of 1–2 characters matches densely: its FilterExpression drops few of the items read.
 */
const readOf = (query: PageQuery): Read => {
  const grams = query.criteria.search === undefined ? undefined : searchGramsOfQuery(query.criteria.search);
  if (grams) return readBySearch(query, grams);
  return query.criteria.payerId === undefined ? readByIndex(query) : readByPayer(query);
};

/*
 * DynamoDB applies Limit before FilterExpression, and the payer index holds entries that may be
 * stale, so one query can yield fewer matches than asked (even none) while more remain. Keep
 * querying from the last evaluated position until the page is full (one extra match tells whether
 * another page exists), the partition is exhausted, or the read bound is reached: then the page is
 * `partial`, and `next` is the last position read.
 */
export async function page(query: PageQuery, filteredBatch: number): Promise<Page> {
  const { limit, maxEvaluated } = query;
  const wanted = limit + 1;
  const read = readOf(query);
  const found: Record<string, unknown>[] = [];
  let position = query.after;
  let evaluated = 0;
  let exhausted = false;
  while (found.length < wanted && evaluated < maxEvaluated) {
    const batch = Math.min(
      maxEvaluated - evaluated,
      read.filtered ? Math.max(filteredBatch, 1) : wanted - found.length,
    );
    const out = await read.next(position, batch);
    evaluated += out.evaluated;
    found.push(...out.matches);
    if (out.last === undefined) {
      exhausted = true;
      break;
    }
    position = out.last;
  }
  if (found.length > limit) {
    const items = found.slice(0, limit);
    return { items: items.map(fromItem), next: String(items.at(-1)![GSI1.sort]), partial: false };
  }
  return exhausted
    ? { items: found.map(fromItem), partial: false }
    : // A full page cut before its look-ahead item is not partial: it has all it asked for.
      { items: found.map(fromItem), next: position!, partial: found.length < limit };
}
