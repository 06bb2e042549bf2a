import { kms } from '#lib/aws/kms';
import { type Env, environment } from '#lib/config/environment';
import { KeyConfigurationError, localKeyFile } from './key-sources.ts';
import type { Keyring } from './keyring.ts';
import { kmsKeyring } from './kms-keyring.ts';
import { localKeyring } from './local-keyring.ts';

/**
 * The secrets keyring (envelope encryption of portal-account secrets), decided once from the
 * environment (and nowhere else):
 *   SECRETS_KEY_ID set          → AWS KMS, that key. Set by the CDK app to the key's ARN, which the
 *                                 RPA workers need to decrypt (an alias or id seals but cannot open).
 *   else LOCAL_SECRETS_KEY_FILE → a local 256-bit key in that file
 *   else LOCAL_STATE_DIR        → a local key in $LOCAL_STATE_DIR/secrets.key (the local stack sets it)
 *   else                        → configuration error (never a silent fallback on AWS)
 *
 * Apart from key-sources.ts so that only what seals or opens secrets imports it, and with it the AWS
 * Encryption SDK (about 230 KB of bundle: docs/security.md).
 */
export const keyringFromEnvironment = (env: Env = environment()): Keyring => {
  if (env.SECRETS_KEY_ID) return kmsKeyring(kms, env.SECRETS_KEY_ID);
  const file = localKeyFile(env, 'LOCAL_SECRETS_KEY_FILE', 'secrets.key');
  if (file) return localKeyring(file);
  throw new KeyConfigurationError(
    'No secrets key: set SECRETS_KEY_ID (KMS) or LOCAL_SECRETS_KEY_FILE / LOCAL_STATE_DIR',
  );
};

let keyring: Keyring | undefined;

/** The process's secrets keyring, resolved on first use (handlers import this at module scope). */
export const secretsKeyring = (): Keyring => {
  keyring ??= keyringFromEnvironment();
  return keyring;
};
