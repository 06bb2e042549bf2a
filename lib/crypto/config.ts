import { join } from 'node:path';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { kms } from '#lib/aws/kms';
import { secretsManager } from '#lib/aws/secrets-manager';
import { loadOrCreateKeyFile } from './key-file.ts';
import type { Keyring } from './keyring.ts';
import { kmsKeyring } from './kms-keyring.ts';
import { localKeyring } from './local-keyring.ts';

/**
 * Which keys this process uses, decided once from the environment (and nowhere else):
 *
 * Secrets keyring (envelope encryption of portal-account secrets)
 *   SECRETS_KEY_ID set          → AWS KMS, that key (ARN, id or alias). Set by the CDK app.
 *   else LOCAL_SECRETS_KEY_FILE → a local 256-bit key in that file
 *   else LOCAL_STATE_DIR        → a local key in $LOCAL_STATE_DIR/secrets.key (the local stack sets it)
 *   else                        → configuration error (never a silent fallback on AWS)
 *
 * Cursor signing keys (HMAC-SHA-256 of pagination cursors)
 *   CURSOR_SIGNING_KEY set      → comma-separated base64/base64url keys of ≥ 32 bytes; the first
 *                                 signs, all verify (rotation).
 *   else CURSOR_SIGNING_SECRET_ARN → the same format, read once per container from Secrets Manager
 *                                 (the CDK app creates the secret and grants read to list/filter only)
 *   else LOCAL_CURSOR_KEY_FILE or $LOCAL_STATE_DIR/cursor.key → a local 256-bit key
 *   else                        → configuration error
 *
 * Local key files are created on first use with mode 0600.
 */
type Env = Record<string, string | undefined>;

export class KeyConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyConfigurationError';
  }
}

const localFile = (env: Env, explicit: string, name: string) =>
  env[explicit] || (env.LOCAL_STATE_DIR ? join(env.LOCAL_STATE_DIR, name) : undefined);

export const keyringFromEnvironment = (env: Env = process.env): Keyring => {
  if (env.SECRETS_KEY_ID) return kmsKeyring(kms, env.SECRETS_KEY_ID);
  const file = localFile(env, 'LOCAL_SECRETS_KEY_FILE', 'secrets.key');
  if (file) return localKeyring(file);
  throw new KeyConfigurationError(
    'No secrets key: set SECRETS_KEY_ID (KMS) or LOCAL_SECRETS_KEY_FILE / LOCAL_STATE_DIR',
  );
};

const parseCursorKeys = (value: string, source: string): Buffer[] => {
  const keys = value.split(',').map((key) => Buffer.from(key.trim(), 'base64'));
  if (keys.some((key) => key.length < 32)) {
    throw new KeyConfigurationError(`${source} must hold base64 keys of at least 32 bytes`);
  }
  return keys;
};

export const cursorKeysFromEnvironment = async (env: Env = process.env): Promise<Buffer[]> => {
  if (env.CURSOR_SIGNING_KEY) return parseCursorKeys(env.CURSOR_SIGNING_KEY, 'CURSOR_SIGNING_KEY');
  if (env.CURSOR_SIGNING_SECRET_ARN) {
    const { SecretString } = await secretsManager.send(
      new GetSecretValueCommand({ SecretId: env.CURSOR_SIGNING_SECRET_ARN }),
    );
    if (!SecretString) throw new KeyConfigurationError('The cursor signing secret is empty');
    return parseCursorKeys(SecretString, 'The cursor signing secret');
  }
  const file = localFile(env, 'LOCAL_CURSOR_KEY_FILE', 'cursor.key');
  if (file) return [loadOrCreateKeyFile(file)];
  throw new KeyConfigurationError(
    'No cursor signing key: set CURSOR_SIGNING_KEY, CURSOR_SIGNING_SECRET_ARN or LOCAL_CURSOR_KEY_FILE / LOCAL_STATE_DIR',
  );
};

let keyring: Keyring | undefined;
let cursorKeys: Promise<Buffer[]> | undefined;

/** The process's secrets keyring, resolved on first use (handlers import this at module scope). */
export const secretsKeyring = (): Keyring => {
  keyring ??= keyringFromEnvironment();
  return keyring;
};

/** Resolved once per container; a failed load is retried on the next call rather than cached. */
export const cursorSigningKeys = (): Promise<Buffer[]> => {
  cursorKeys ??= cursorKeysFromEnvironment().catch((error) => {
    cursorKeys = undefined;
    throw error;
  });
  return cursorKeys;
};
