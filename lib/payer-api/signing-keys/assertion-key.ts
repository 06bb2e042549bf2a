import type { JWTPayload } from 'jose';
import { NoSigningKey } from '../errors.ts';
import type { PayerKeyKeeper } from './key-keeper.ts';
import { keySetIdOf } from './key-set-id.ts';
import type { PayerKeySetStore } from './key-set-store.ts';
import { signingKeyOf } from './key-sets.ts';

/**
 * The key a client's assertions are signed with now. Read from the client's own partition, by the id of
 * the client the connection belongs to (never by a key set id, nor from anything a payer or a request
 * says), and checked to be that client's: one tenant's key never signs for another.
 */
export interface AssertionKey {
  kid: string;
  /** The compact JWS of `claims` (RS384, `typ: JWT`, this `kid`), signed where the private key lives. */
  sign(claims: JWTPayload): Promise<string>;
}

export interface AssertionKeySources {
  store: PayerKeySetStore;
  keeperOf: (kind: PayerKeyKeeper['kind']) => PayerKeyKeeper;
  now?: Date;
}

export const assertionKeyOf = async (
  clientId: string,
  { store, keeperOf, now = new Date() }: AssertionKeySources,
): Promise<AssertionKey> => {
  const keySet = await store.ofClient(clientId);
  if (!keySet || keySet.clientId !== clientId || keySet.keySetId !== keySetIdOf(clientId)) throw new NoSigningKey();
  const key = signingKeyOf(keySet, now);
  if (!key) throw new NoSigningKey();
  const keeper = keeperOf(key.keeper);
  return { kid: key.kid, sign: (claims) => keeper.signJwt(key.keyRef, key.kid, claims) };
};
