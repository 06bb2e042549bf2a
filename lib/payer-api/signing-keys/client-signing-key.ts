import { type AssertionKey, assertionKeyOf } from './assertion-key.ts';
import { dynamoPayerKeySetStore } from './dynamo-key-set-store.ts';
import { keeperOf } from './keepers.ts';

/** The key an API client's assertions are signed with now: its key set in the table, its keeper (KMS, or local). */
export const clientSigningKey = (clientId: string): Promise<AssertionKey> =>
  assertionKeyOf(clientId, { store: dynamoPayerKeySetStore, keeperOf });
