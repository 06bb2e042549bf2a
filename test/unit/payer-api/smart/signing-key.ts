import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PayerSigningKeySet } from '#lib/entities/payer-signing-keys';
import type { AssertionKey } from '#lib/payer-api/signing-keys/assertion-key';
import { kidOf } from '#lib/payer-api/signing-keys/key-keeper';
import { withNewKey } from '#lib/payer-api/signing-keys/key-sets';
import { localKeyKeeper } from '#lib/payer-api/signing-keys/local-key-keeper';

/**
 * A client's first signing key, made by the real local keeper in a fresh directory: the key set that
 * publishes it, and the key as the signer uses it.
 */
export const localSigningKey = async (clientId = 'client-a', now = new Date()) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'payer-keys-'));
  const keeper = localKeyKeeper(stateDir);
  const created = await keeper.create(clientId);
  const kid = await kidOf(created.publicJwk);
  const { keySet } = withNewKey(undefined, clientId, { kid, keeper: 'local', ...created }, now);
  const key: AssertionKey = { kid, sign: (claims) => keeper.signJwt(created.keyRef, kid, claims) };
  return { stateDir, keeper, keyRef: created.keyRef, keySet: keySet as PayerSigningKeySet, key };
};
