import { createHmac } from 'node:crypto';
import { type Env, environment } from '#lib/config/environment';
import { type SigningKeySource, signingKeysFromEnvironment, signingKeysOnce } from '#lib/crypto/key-sources';

/*
 * The fingerprint an idempotency record keeps of its request (idempotency.ts), to tell a retry (same
 * request) from a reused key (another request: 422). A body can hold secrets (a portal account's
 * password and TOTP seed), so the fingerprint is keyed: HMAC-SHA-256 under a server key, never a
 * plain hash that whoever reads the table could test guesses against. Its keys are resolved once
 * per container by the resolver of the other HMAC keys (lib/crypto/key-sources.ts), on the first request
 * that carries an Idempotency-Key:
 *
 *   IDEMPOTENCY_FINGERPRINT_KEY set  → comma-separated base64/base64url keys of ≥ 32 bytes; the first
 *                                      fingerprints new records, all match (rotation). Tests.
 *   else IDEMPOTENCY_FINGERPRINT_SECRET_ARN → the same format, read from Secrets Manager (the CDK app
 *                                      generates the secret and lets only the idempotent routes read it)
 *   else LOCAL_IDEMPOTENCY_FINGERPRINT_KEY_FILE or $LOCAL_STATE_DIR/idempotency-fingerprint.key
 *                                    → a local 256-bit key (0600)
 *   else                             → configuration error
 */
const REQUEST_FINGERPRINT_KEYS: SigningKeySource = {
  keyVariable: 'IDEMPOTENCY_FINGERPRINT_KEY',
  secretArnVariable: 'IDEMPOTENCY_FINGERPRINT_SECRET_ARN',
  fileVariable: 'LOCAL_IDEMPOTENCY_FINGERPRINT_KEY_FILE',
  fileName: 'idempotency-fingerprint.key',
  label: 'idempotency fingerprint',
};

export const fingerprintKeysFromEnvironment = (env: Env = environment()) =>
  signingKeysFromEnvironment(REQUEST_FINGERPRINT_KEYS, env);

/** The fingerprint keys of this container. */
export const fingerprintKeys = signingKeysOnce(REQUEST_FINGERPRINT_KEYS);

/** Separates these MACs from any other use of the same bytes. */
const DOMAIN = 'idempotency-request/v1';

/** The request's fingerprint under each key (base64url), the current key's first. */
export const fingerprintsOf = (keys: readonly Buffer[], request: string): string[] =>
  keys.map((key) => createHmac('sha256', key).update(`${DOMAIN}\n`).update(request).digest('base64url'));
