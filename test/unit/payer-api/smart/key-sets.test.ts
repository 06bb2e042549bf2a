import { describe, expect, it } from 'vitest';
import type { PayerSigningKeySet } from '#lib/entities/payer-signing-keys';
import {
  JWKS_MAX_AGE_SECONDS,
  jwksOf,
  type KeyToAdd,
  keyListingOf,
  RETIREMENT_GRACE_SECONDS,
  signingKeyOf,
  withNewKey,
} from '#lib/payer-api/signing-keys/key-sets';

const key = (kid: string): KeyToAdd => ({
  kid,
  keeper: 'local',
  keyRef: `${kid}.pem`,
  publicJwk: { kty: 'RSA', n: `n-${kid}`, e: 'AQAB' },
});
const t0 = new Date('2026-01-01T00:00:00.000Z');
const plus = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const kidsOf = (keySet: PayerSigningKeySet, at: Date) => jwksOf(keySet, at).keys.map((jwk) => jwk.kid);

describe('a key set over rotations', () => {
  it("signs with a client's first key at once: no payer can have cached a JWKS without it", () => {
    const { keySet } = withNewKey(undefined, 'client-a', key('k1'), t0);
    expect(signingKeyOf(keySet, t0)?.kid).toBe('k1');
    expect(kidsOf(keySet, t0)).toEqual(['k1']);
  });

  it('publishes a new key at once but signs with it only one JWKS cache lifetime later', () => {
    const first = withNewKey(undefined, 'client-a', key('k1'), t0).keySet;
    const rotatedAt = plus(86_400);
    const { keySet } = withNewKey(first, 'client-a', key('k2'), rotatedAt);
    const rotated = (seconds: number) => new Date(rotatedAt.getTime() + seconds * 1000);
    // Published beside the old key before any assertion uses it…
    expect(kidsOf(keySet, rotatedAt)).toEqual(['k1', 'k2']);
    expect(signingKeyOf(keySet, rotatedAt)?.kid).toBe('k1');
    expect(signingKeyOf(keySet, rotated(JWKS_MAX_AGE_SECONDS - 1))?.kid).toBe('k1');
    // …signing once every cached copy has it.
    expect(signingKeyOf(keySet, rotated(JWKS_MAX_AGE_SECONDS))?.kid).toBe('k2');
    // The old key stays published for the grace period, then is gone from the JWKS.
    expect(kidsOf(keySet, rotated(JWKS_MAX_AGE_SECONDS + RETIREMENT_GRACE_SECONDS - 1))).toEqual(['k1', 'k2']);
    expect(kidsOf(keySet, rotated(JWKS_MAX_AGE_SECONDS + RETIREMENT_GRACE_SECONDS))).toEqual(['k2']);
    expect(keySet.version).toBe(2);
    expect(keyListingOf(keySet, rotatedAt).map(({ kid, state }) => [kid, state])).toEqual([
      ['k1', 'signing'],
      ['k2', 'next'],
    ]);
    expect(keyListingOf(keySet, rotated(JWKS_MAX_AGE_SECONDS)).map(({ state }) => state)).toEqual([
      'published',
      'signing',
    ]);
  });

  it('drops the keys retired by the time of the next rotation, for their private keys to be discarded', () => {
    const first = withNewKey(undefined, 'client-a', key('k1'), t0).keySet;
    const second = withNewKey(first, 'client-a', key('k2'), plus(60)).keySet;
    const late = plus(60 + JWKS_MAX_AGE_SECONDS + RETIREMENT_GRACE_SECONDS + 1);
    const { keySet, dropped } = withNewKey(second, 'client-a', key('k3'), late);
    expect(dropped.map((old) => old.kid)).toEqual(['k1']);
    expect(keySet.keys.map((kept) => kept.kid)).toEqual(['k2', 'k3']);
    expect(signingKeyOf(keySet, late)?.kid).toBe('k2');
  });

  it('publishes public members only, whatever a stored key holds', () => {
    const { keySet } = withNewKey(undefined, 'client-a', key('k1'), t0);
    const leaky = {
      ...keySet,
      keys: keySet.keys.map((stored) => ({
        ...stored,
        publicJwk: { ...stored.publicJwk, d: 'private', p: 'p', q: 'q', dp: 'dp', dq: 'dq', qi: 'qi' },
      })),
    };
    const [published] = jwksOf(leaky, t0).keys;
    expect(published).toEqual({ kty: 'RSA', n: 'n-k1', e: 'AQAB', kid: 'k1', alg: 'RS384', use: 'sig' });
    expect(keyListingOf(leaky, t0)[0]!.publicJwk).toEqual({ kty: 'RSA', n: 'n-k1', e: 'AQAB' });
  });
});
