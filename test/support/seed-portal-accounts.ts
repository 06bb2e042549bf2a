import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import {
  normalizeSearchText,
  portalAccountEntity,
  portalAccountGramEntity,
  portalAccountPayerEntity,
  type StoredPortalAccount,
  searchGramsOf,
} from '#lib/entities/portal-account';

/*
 * Seeds organizations of thousands of portal accounts: the items the store writes for each account (the
 * account, its payer and trigram entries), 25 a BatchWriteItem. The store writes one item a request (about 40
 * for an account with its trigram entries), too slow on dynalite for a test's setup; the store's own write path
 * is tested on its own (portal-accounts-search.test.ts writes through it).
 */

const itemsOf = (account: StoredPortalAccount) => {
  const [displayNameSearch, usernameSearch] = [account.displayName, account.username].map(normalizeSearchText) as [
    string,
    string,
  ];
  return [
    portalAccountEntity.toItem(account),
    ...account.payerIds.map((payerId) => portalAccountPayerEntity.toItem({ ...account, payerId })),
    ...searchGramsOf(displayNameSearch, usernameSearch).map((gram) =>
      portalAccountGramEntity.toItem({ ...account, gram, displayNameSearch, usernameSearch }),
    ),
  ];
};

const writeAll = async (items: Record<string, unknown>[]) => {
  let requests = items.map((Item) => ({ PutRequest: { Item } }));
  while (requests.length > 0) {
    const out = await dynamo.send(new BatchWriteCommand({ RequestItems: { [tableName()]: requests } }));
    requests = (out.UnprocessedItems?.[tableName()] ?? []) as typeof requests;
  }
};

/** Writes the accounts' items, 8 batches at a time. */
export const seedPortalAccounts = async (accounts: readonly StoredPortalAccount[]) => {
  const items = accounts.flatMap(itemsOf);
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) => items.slice(i * 25, i * 25 + 25));
  for (let i = 0; i < batches.length; i += 8) await Promise.all(batches.slice(i, i + 8).map(writeAll));
};
