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
 * Signing keys (HMAC-SHA-256), one SigningKeySource per purpose: pagination cursors (CURSOR_SIGNING_*,
 * below) and scraper tokens (RPA_TOKEN_*, lib/rpa/scraper-token.ts), each resolved the same way:
 *   CURSOR_SIGNING_KEY set      → comma-separated base64/base64url keys of ≥ 32 bytes; the first
 *                                 signs, all verify (rotation).
 *   else CURSOR_SIGNING_SECRET_ARN → the same format, read once per container from Secrets Manager
 *                                 (the CDK app creates one secret per purpose and grants read to the
 *                                 functions that sign or verify with it, only)
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

/** Where one kind of HMAC signing key comes from (see the header of this file). */
export interface SigningKeySource {
  /** Comma-separated base64 keys, set directly (tests). */
  keyVariable: string;
  /** The same format in a Secrets Manager secret (AWS). */
  secretArnVariable: string;
  /** A local key file, else `fileName` under LOCAL_STATE_DIR. */
  fileVariable: string;
  fileName: string;
  /** Names the key in errors. */
  label: string;
}

export const CURSOR_SIGNING_KEYS: SigningKeySource = {
  keyVariable: 'CURSOR_SIGNING_KEY',
  secretArnVariable: 'CURSOR_SIGNING_SECRET_ARN',
  fileVariable: 'LOCAL_CURSOR_KEY_FILE',
  fileName: 'cursor.key',
  label: 'cursor signing',
};

const parseSigningKeys = (value: string, source: string): Buffer[] => {
  const keys = value.split(',').map((key) => Buffer.from(key.trim(), 'base64'));
  if (keys.some((key) => key.length < 32)) {
    throw new KeyConfigurationError(`${source} must hold base64 keys of at least 32 bytes`);
  }
  return keys;
};

/** The keys of `source`: the first signs, all verify (rotation). */
export const signingKeysFromEnvironment = async (
  source: SigningKeySource,
  env: Env = process.env,
): Promise<Buffer[]> => {
  const direct = env[source.keyVariable];
  if (direct) return parseSigningKeys(direct, source.keyVariable);
  const secretArn = env[source.secretArnVariable];
  if (secretArn) {
    const { SecretString } = await secretsManager.send(new GetSecretValueCommand({ SecretId: secretArn }));
    if (!SecretString) throw new KeyConfigurationError(`The ${source.label} secret is empty`);
    return parseSigningKeys(SecretString, `The ${source.label} secret`);
  }
  const file = localFile(env, source.fileVariable, source.fileName);
  if (file) return [loadOrCreateKeyFile(file)];
  throw new KeyConfigurationError(
    `No ${source.label} key: set ${source.keyVariable}, ${source.secretArnVariable} or ${source.fileVariable} / LOCAL_STATE_DIR`,
  );
};

export const cursorKeysFromEnvironment = (env: Env = process.env) =>
  signingKeysFromEnvironment(CURSOR_SIGNING_KEYS, env);

/** Resolves `source` once per container; a failed load is retried on the next call rather than cached. */
export const signingKeysOnce = (source: SigningKeySource) => {
  let resolved: Promise<Buffer[]> | undefined;
  return (): Promise<Buffer[]> => {
    resolved ??= signingKeysFromEnvironment(source).catch((error) => {
      resolved = undefined;
      throw error;
    });
    return resolved;
  };
};

let keyring: Keyring | undefined;

/** The process's secrets keyring, resolved on first use (handlers import this at module scope). */
export const secretsKeyring = (): Keyring => {
  keyring ??= keyringFromEnvironment();
  return keyring;
};

/** The cursor signing keys of this container. */
export const cursorSigningKeys = signingKeysOnce(CURSOR_SIGNING_KEYS);
