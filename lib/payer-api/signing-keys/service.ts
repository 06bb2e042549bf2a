import { NotFound } from '#lib/errors';
import { dynamoPayerKeySetStore } from './dynamo-key-set-store.ts';
import { jwksOf, type PublishedJwk } from './key-sets.ts';

/** The JWKS route's service: a key set's published keys, by its public id, from the table. */
export const publishedJwks = async (keySetId: string, now = new Date()): Promise<{ keys: PublishedJwk[] }> => {
  const keySet = await dynamoPayerKeySetStore.byKeySetId(keySetId);
  if (!keySet) throw new NotFound(`Key set ${keySetId}`);
  return jwksOf(keySet, now);
};
