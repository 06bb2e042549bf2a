import {
  PAYER_SIGNING_ALG,
  type PayerKeyKeeperKind,
  type PayerSigningKey,
  type PayerSigningKeySet,
  type RsaPublicJwk,
} from '#lib/entities/payer-signing-keys';
import { keySetIdOf } from './key-set-id.ts';

/**
 * A client's key set over time (docs/payer-api.md, "Rotation"): which keys are published in its JWKS,
 * which one signs, and what a rotation changes. Pure: instants in, records out.
 *
 * A payer caches our JWKS (we tell it for how long: JWKS_MAX_AGE_SECONDS). So a new key is published at
 * once but signs only one cache lifetime later, when every copy a payer may hold has it; until then the
 * previous key signs. The key it replaces stays published for RETIREMENT_GRACE_SECONDS after the new one
 * starts signing (an assertion it signed just before may still be on its way), then is retired: no longer
 * published, and its private key discarded by the next rotation.
 */

/** How long a payer may cache our JWKS (Cache-Control max-age), and so how long a new key waits to sign. */
export const JWKS_MAX_AGE_SECONDS = 600;
/** How long a replaced key stays published after its successor starts signing (assertions live 4 minutes). */
export const RETIREMENT_GRACE_SECONDS = 3600;
/** Keys a set may hold at once (published or waiting): more means rotations faster than keys can retire. */
export const MAX_KEYS_PER_SET = 5;

/** A public key as the JWKS serves it: the public members only, named and restricted to signatures. */
export interface PublishedJwk extends RsaPublicJwk {
  kid: string;
  alg: typeof PAYER_SIGNING_ALG;
  use: 'sig';
}

const at = (instant: string) => Date.parse(instant);

const isPublished = (key: PayerSigningKey, now: Date): boolean =>
  at(key.publishedAt) <= now.getTime() && (key.retiredAt === null || at(key.retiredAt) > now.getTime());

/** The key that signs now: the newest published one whose activeFrom has come; undefined when none has. */
export const signingKeyOf = (keySet: PayerSigningKeySet, now: Date): PayerSigningKey | undefined =>
  keySet.keys
    .filter((key) => isPublished(key, now) && at(key.activeFrom) <= now.getTime())
    .reduce<PayerSigningKey | undefined>(
      (newest, key) => (!newest || at(key.activeFrom) >= at(newest.activeFrom) ? key : newest),
      undefined,
    );

/**
 * The JWKS: every published key, signing or waiting to. Each JWK is built member by member from the
 * public key, so nothing else a stored key might hold (a private member) can reach it.
 */
export const jwksOf = (keySet: PayerSigningKeySet, now: Date): { keys: PublishedJwk[] } => ({
  keys: keySet.keys
    .filter((key) => isPublished(key, now))
    .map(({ kid, publicJwk }) => ({
      kty: 'RSA',
      n: publicJwk.n,
      e: publicJwk.e,
      kid,
      alg: PAYER_SIGNING_ALG,
      use: 'sig',
    })),
});

export interface KeyToAdd {
  kid: string;
  keeper: PayerKeyKeeperKind;
  keyRef: string;
  publicJwk: RsaPublicJwk;
}

const plusSeconds = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

/**
 * The set after a rotation adds `key` at `now`, and the keys it drops (retired: their private keys can go).
 * A set's first key signs at once: no payer can have cached a JWKS without it, since the route answered
 * 404 (never cached) while the set did not exist. Every later key waits one JWKS cache lifetime, and each
 * key not yet retiring retires a grace period after the new one starts signing.
 */
export const withNewKey = (
  keySet: PayerSigningKeySet | undefined,
  clientId: string,
  key: KeyToAdd,
  now: Date,
): { keySet: PayerSigningKeySet; dropped: PayerSigningKey[] } => {
  const published = now.toISOString();
  const activeFrom = keySet ? plusSeconds(now, JWKS_MAX_AGE_SECONDS) : published;
  const retiredAt = new Date(at(activeFrom) + RETIREMENT_GRACE_SECONDS * 1000).toISOString();
  const kept = (keySet?.keys ?? []).filter((old) => old.retiredAt === null || at(old.retiredAt) > now.getTime());
  const dropped = (keySet?.keys ?? []).filter((old) => !kept.includes(old));
  const added: PayerSigningKey = {
    ...key,
    alg: PAYER_SIGNING_ALG,
    publishedAt: published,
    activeFrom,
    retiredAt: null,
  };
  return {
    keySet: {
      clientId,
      keySetId: keySetIdOf(clientId),
      keys: [...kept.map((old) => (old.retiredAt === null ? { ...old, retiredAt } : old)), added],
      version: (keySet?.version ?? 0) + 1,
      createdAt: keySet?.createdAt ?? published,
      updatedAt: published,
    },
    dropped,
  };
};

/** How many keys a rotation at `now` would leave the set with beside the new one. */
export const keysKeptAt = (keySet: PayerSigningKeySet | undefined, now: Date): number =>
  (keySet?.keys ?? []).filter((key) => key.retiredAt === null || at(key.retiredAt) > now.getTime()).length;

/**
 * Where a key stands at `now`: `signing`; `next` (published, signs from activeFrom); `published` (replaced,
 * published until retiredAt for assertions already on their way); `retired`.
 */
type KeyState = 'signing' | 'next' | 'published' | 'retired';

/** A key as an operator lists it: its public parts and where it stands (never its keeper's reference). */
export interface KeyListing {
  kid: string;
  alg: typeof PAYER_SIGNING_ALG;
  keeper: PayerKeyKeeperKind;
  state: KeyState;
  publicJwk: RsaPublicJwk;
  publishedAt: string;
  activeFrom: string;
  retiredAt: string | null;
}

export const keyListingOf = (keySet: PayerSigningKeySet, now: Date): KeyListing[] => {
  const signing = signingKeyOf(keySet, now);
  const stateOf = (key: PayerSigningKey): KeyState => {
    if (key === signing) return 'signing';
    if (!isPublished(key, now)) return 'retired';
    return at(key.activeFrom) > now.getTime() ? 'next' : 'published';
  };
  return keySet.keys.map((key) => ({
    kid: key.kid,
    alg: key.alg,
    keeper: key.keeper,
    state: stateOf(key),
    publicJwk: { kty: 'RSA', n: key.publicJwk.n, e: key.publicJwk.e },
    publishedAt: key.publishedAt,
    activeFrom: key.activeFrom,
    retiredAt: key.retiredAt,
  }));
};
