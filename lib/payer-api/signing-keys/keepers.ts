import { kms } from '#lib/aws/kms';
import { environment } from '#lib/config/environment';
import type { PayerKeyKeeperKind } from '#lib/entities/payer-signing-keys';
import type { PayerKeyKeeper } from './key-keeper.ts';
import { kmsKeyKeeper } from './kms-key-keeper.ts';
import { localKeyKeeper } from './local-key-keeper.ts';

/**
 * The keeper of a stored key, by the kind the key records: KMS through this process's KMS client, or the
 * local stack's key files under LOCAL_STATE_DIR. A Lambda function has no LOCAL_STATE_DIR, so a key that
 * says `local` can never sign there.
 */
let local: { stateDir: string; keeper: PayerKeyKeeper } | undefined;

export const keeperOf = (kind: PayerKeyKeeperKind): PayerKeyKeeper => {
  if (kind === 'kms') return kmsKeyKeeper(kms);
  const stateDir = environment().LOCAL_STATE_DIR;
  if (!stateDir) throw new Error('A local payer signing key needs LOCAL_STATE_DIR (the local stack)');
  if (local?.stateDir !== stateDir) local = { stateDir, keeper: localKeyKeeper(stateDir) };
  return local.keeper;
};
