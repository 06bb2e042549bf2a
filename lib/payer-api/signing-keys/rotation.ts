import { LimitReached } from '#lib/errors';
import { kidOf, type PayerKeyKeeper } from './key-keeper.ts';
import type { PayerKeySetStore } from './key-set-store.ts';
import { keysKeptAt, MAX_KEYS_PER_SET, withNewKey } from './key-sets.ts';

/**
 * An operator's rotation of a client's payer signing key (the admin CLI, `rotate-payer-signing-key`): a new
 * key in the keeper, published in the client's key set beside the ones still published (./key-sets.ts says
 * when each signs and retires); the private keys of keys retired by now are discarded. Never an API
 * function's: on AWS it creates a KMS key, which only an operator may.
 */
export interface RotationResult {
  clientId: string;
  keySetId: string;
  kid: string;
  /** When the new key starts signing: at once for a client's first key, else one JWKS cache lifetime on. */
  activeFrom: string;
  /** Keys retired before this rotation, whose private keys are now deleted (KMS: scheduled). */
  discardedKids: string[];
  /**
   * Retired keys whose deletion failed (the rotation itself stands): dropped from the set all the same, so
   * an operator deletes them by hand (KMS: the key tagged with the client id and this kid's key).
   */
  undiscardedKids?: string[];
}

export const rotatePayerSigningKey = async ({
  store,
  keeper,
  clientId,
  now = new Date(),
}: {
  store: PayerKeySetStore;
  keeper: PayerKeyKeeper;
  clientId: string;
  now?: Date;
}): Promise<RotationResult> => {
  const current = await store.ofClient(clientId);
  if (keysKeptAt(current, now) >= MAX_KEYS_PER_SET) {
    throw new LimitReached(
      `The client's key set holds ${MAX_KEYS_PER_SET} keys that are not retired yet: wait until the oldest retires.`,
      { limit: MAX_KEYS_PER_SET },
    );
  }
  const created = await keeper.create(clientId);
  const kid = await kidOf(created.publicJwk);
  const { keySet, dropped } = withNewKey(current, clientId, { kid, keeper: keeper.kind, ...created }, now);
  try {
    await store.put(keySet);
  } catch (error) {
    // Not published (another rotation won the race): the key must not outlive it.
    await keeper.discard(created.keyRef);
    throw error;
  }
  // A retired key of another keeper (a local key of a table moved to AWS) is left where it is. The new
  // key is published by now: a failed deletion must not make the operator rotate again.
  const discarded: string[] = [];
  const undiscarded: string[] = [];
  for (const key of dropped.filter((old) => old.keeper === keeper.kind)) {
    await keeper.discard(key.keyRef).then(
      () => discarded.push(key.kid),
      () => undiscarded.push(key.kid),
    );
  }
  return {
    clientId,
    keySetId: keySet.keySetId,
    kid,
    activeFrom: keySet.keys.at(-1)!.activeFrom,
    discardedKids: discarded,
    ...(undiscarded.length > 0 ? { undiscardedKids: undiscarded } : {}),
  };
};
