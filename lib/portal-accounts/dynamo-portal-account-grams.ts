import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '#lib/aws/conditional-writes';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import {
  normalizeSearchText,
  portalAccountEntity,
  portalAccountGramEntity,
  type StoredPortalAccount,
  searchGramsOf,
} from '#lib/entities/portal-account';
import { GSI2 } from '#lib/table';

/*
 * The search index (docs/data-model.md, patterns 40–41): an entry per trigram of an account's normalized
 * texts. Written after the account (the table has no transactions), and only when what they hold changes (the texts, the organization),
 * so a status or password change writes none. A stale entry (a concurrent rename) is skipped on read:
 * the account itself is checked. A missing one (a failed write) comes back with the next rename, or the
 * backfill.
 */

interface Indexed {
  clientId: string;
  organizationId: string;
  externalId: string;
  createdAt: string;
  version: number;
  updatedAt: string;
  displayNameSearch: string;
  usernameSearch: string;
  grams: string[];
}

const indexedOf = (account: StoredPortalAccount | undefined): Indexed | undefined => {
  if (!account) return undefined;
  const displayNameSearch = normalizeSearchText(account.displayName);
  const usernameSearch = normalizeSearchText(account.username);
  const { clientId, organizationId, externalId, createdAt, version, updatedAt } = account;
  const grams = searchGramsOf(displayNameSearch, usernameSearch);
  return {
    clientId,
    organizationId,
    externalId,
    createdAt,
    version,
    updatedAt,
    displayNameSearch,
    usernameSearch,
    grams,
  };
};

const sameEntries = (a: Indexed, b: Indexed) =>
  a.organizationId === b.organizationId &&
  a.createdAt === b.createdAt &&
  a.displayNameSearch === b.displayNameSearch &&
  a.usernameSearch === b.usernameSearch;

/**
 * Puts the entry unless a later write of the same account already did (concurrent renames land in any
 * order); an entry of an account since deleted and re-created under its id (another position) is replaced.
 */
const putEntry = async (indexed: Indexed, gram: string) => {
  const item = portalAccountGramEntity.toItem({ ...indexed, gram });
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: item,
        ConditionExpression: 'attribute_not_exists(#version) OR #version < :version OR #position <> :position',
        ExpressionAttributeNames: { '#version': 'version', '#position': GSI2.sort },
        ExpressionAttributeValues: { ':version': indexed.version, ':position': item.gsi2sk },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

/** Deletes the entry only if it is still the one `indexed` wrote (a concurrent rename may have rewritten it). */
const deleteEntry = async (indexed: Indexed, gram: string) => {
  const entry = portalAccountGramEntity.toItem({ ...indexed, gram });
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: portalAccountGramEntity.key(entry),
        ConditionExpression: '#partition = :partition AND displayNameSearch = :name AND usernameSearch = :username',
        ExpressionAttributeNames: { '#partition': GSI2.partition },
        ExpressionAttributeValues: {
          ':partition': entry.gsi2pk,
          ':name': indexed.displayNameSearch,
          ':username': indexed.usernameSearch,
        },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
};

/**
 * Brings an account's search entries from `before` to `after` (absent:
 * created, deleted). The entries of an account are keyed by account and trigram: a move to another
 * organization rewrites them in place.
 */
export async function indexSearchText(before: StoredPortalAccount | undefined, after: StoredPortalAccount | undefined) {
  const [old, now] = [indexedOf(before), indexedOf(after)];
  if (old && now && sameEntries(old, now)) return;
  const kept = new Set(now?.grams);
  await Promise.all([
    ...(now ? now.grams.map((gram) => putEntry(now, gram)) : []),
    ...(old ? old.grams.filter((gram) => !kept.has(gram)).map((gram) => deleteEntry(old, gram)) : []),
  ]);
}

/** The account an item (its previous state, from ReturnValues) held. */
export const accountOf = (item: Record<string, unknown> | undefined) =>
  item && portalAccountEntity.matches(item) ? portalAccountEntity.fromItem(item) : undefined;
