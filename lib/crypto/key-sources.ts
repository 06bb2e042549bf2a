import { join } from 'node:path';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { secretsManager } from '#lib/aws/secrets-manager';
import { type Env, environment } from '#lib/config/environment';
import { loadOrCreateKeyFile } from './key-file.ts';

/**
 * Which keys this process uses, decided once from the environment (read through lib/config/environment.ts;
 * lib/config/settings.ts checks the form of the key variables at cold start). The secrets
 * keyring is chosen the same way in secrets-keyring.ts, apart so that only the functions that seal
 * or open secrets bundle the Encryption SDK.
 *
 * Signing keys (HMAC-SHA-256), one SigningKeySource per purpose: pagination cursors (CURSOR_SIGNING_*,
 * below), scraper tokens (RPA_TOKEN_*, lib/runs/scraper-token.ts) and idempotency request fingerprints
 * (IDEMPOTENCY_FINGERPRINT_*, lib/http/request-fingerprint.ts), each resolved the same way:
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
export class KeyConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyConfigurationError';
  }
}

/** `env[explicit]`, else `name` under LOCAL_STATE_DIR, else undefined. */
export const localKeyFile = (env: Env, explicit: string, name: string) =>
  env[explicit] || (env.LOCAL_STATE_DIR ? join(env.LOCAL_STATE_DIR, name) : undefined);

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

const CURSOR_SIGNING_KEYS: SigningKeySource = {
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
  env: Env = environment(),
): Promise<Buffer[]> => {
  const direct = env[source.keyVariable];
  if (direct) return parseSigningKeys(direct, source.keyVariable);
  const secretArn = env[source.secretArnVariable];
  if (secretArn) {
    const { SecretString } = await secretsManager.send(new GetSecretValueCommand({ SecretId: secretArn }));
    if (!SecretString) throw new KeyConfigurationError(`The ${source.label} secret is empty`);
    return parseSigningKeys(SecretString, `The ${source.label} secret`);
  }
  const file = localKeyFile(env, source.fileVariable, source.fileName);
  if (file) return [loadOrCreateKeyFile(file)];
  throw new KeyConfigurationError(
    `No ${source.label} key: set ${source.keyVariable}, ${source.secretArnVariable} or ${source.fileVariable} / LOCAL_STATE_DIR`,
  );
};

export const cursorKeysFromEnvironment = (env: Env = environment()) =>
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

/** The cursor signing keys of this container. */
export const cursorSigningKeys = signingKeysOnce(CURSOR_SIGNING_KEYS);
