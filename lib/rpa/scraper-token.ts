import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { errors, jwtVerify, SignJWT } from 'jose';
import { secretsManager } from '#lib/aws/secrets-manager';
import { KeyConfigurationError } from '#lib/crypto/config';
import { loadOrCreateKeyFile } from '#lib/crypto/key-file';

/*
 * The scraper token: a JWT (HS256) that lets its holder read one request's scraper session for 15
 * minutes (docs/rpa.md). Its key is resolved from the environment once per container, the same way
 * as the cursor signing keys (lib/crypto/config.ts):
 *
 *   RPA_TOKEN_KEY set          → comma-separated base64/base64url keys of ≥ 32 bytes; the first signs,
 *                                all verify (rotation). Tests.
 *   else RPA_TOKEN_SECRET_ARN  → the same format, read from Secrets Manager (the CDK app generates the
 *                                secret and lets only the token's signer and verifier read it)
 *   else LOCAL_RPA_TOKEN_KEY_FILE or $LOCAL_STATE_DIR/rpa-token.key → a local 256-bit key (0600)
 *   else                       → configuration error
 */
type Env = Record<string, string | undefined>;

export const SCRAPER_TOKEN_TTL_SECONDS = 15 * 60;
export const SCRAPER_TOKEN_ISSUER = 'service-review-api';
export const SCRAPER_TOKEN_AUDIENCE = 'scraper-session';
/** Ours are about 450 characters; anything much longer is refused before it is parsed. */
const MAX_TOKEN_LENGTH = 4096;

/** What a valid token grants: one request of one client, on behalf of one client user. */
export interface ScraperClaims {
  clientId: string;
  clientUserId: string;
  requestExternalId: string;
  tokenId: string;
  expiresAt: string;
}

/** Missing, malformed, expired, for another request, or badly signed: the holder learns no more than that. */
export class InvalidScraperToken extends Error {
  constructor(readonly reason: string) {
    super('The scraper token is not valid');
    this.name = 'InvalidScraperToken';
  }
}

const parseKeys = (value: string, source: string): Buffer[] => {
  const keys = value.split(',').map((key) => Buffer.from(key.trim(), 'base64'));
  if (keys.some((key) => key.length < 32)) {
    throw new KeyConfigurationError(`${source} must hold base64 keys of at least 32 bytes`);
  }
  return keys;
};

export const scraperTokenKeysFromEnvironment = async (env: Env = process.env): Promise<Buffer[]> => {
  if (env.RPA_TOKEN_KEY) return parseKeys(env.RPA_TOKEN_KEY, 'RPA_TOKEN_KEY');
  if (env.RPA_TOKEN_SECRET_ARN) {
    const { SecretString } = await secretsManager.send(
      new GetSecretValueCommand({ SecretId: env.RPA_TOKEN_SECRET_ARN }),
    );
    if (!SecretString) throw new KeyConfigurationError('The RPA token secret is empty');
    return parseKeys(SecretString, 'The RPA token secret');
  }
  const file = env.LOCAL_RPA_TOKEN_KEY_FILE || (env.LOCAL_STATE_DIR ? join(env.LOCAL_STATE_DIR, 'rpa-token.key') : '');
  if (file) return [loadOrCreateKeyFile(file)];
  throw new KeyConfigurationError(
    'No RPA token key: set RPA_TOKEN_KEY, RPA_TOKEN_SECRET_ARN or LOCAL_RPA_TOKEN_KEY_FILE / LOCAL_STATE_DIR',
  );
};

let resolved: Promise<Buffer[]> | undefined;

/** Resolved once per container; a failed load is retried on the next call rather than cached. */
export const scraperTokenKeys = (): Promise<Buffer[]> => {
  resolved ??= scraperTokenKeysFromEnvironment().catch((error) => {
    resolved = undefined;
    throw error;
  });
  return resolved;
};

/** A key's id in the token header: which of the rotation's keys signed it (a hash prefix, not the key). */
const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('base64url').slice(0, 12);

export interface ScraperTokens {
  sign(grant: { clientId: string; clientUserId: string; requestExternalId: string }): Promise<{
    token: string;
    expiresAt: string;
  }>;
  /** The claims of a valid token for `requestExternalId`; InvalidScraperToken otherwise. */
  verify(token: string | undefined, requestExternalId: string): Promise<ScraperClaims>;
}

const stringClaim = (payload: Record<string, unknown>, name: string) => {
  const value = payload[name];
  if (typeof value !== 'string' || value === '') throw new InvalidScraperToken(`claim ${name}`);
  return value;
};

export const scraperTokens = (
  keys: () => Promise<Buffer[]> = scraperTokenKeys,
  now: () => Date = () => new Date(),
): ScraperTokens => ({
  sign: async ({ clientId, clientUserId, requestExternalId }) => {
    const [key] = await keys();
    const issuedAt = Math.floor(now().getTime() / 1000);
    const expiresAt = issuedAt + SCRAPER_TOKEN_TTL_SECONDS;
    const token = await new SignJWT({ cid: clientId, req: requestExternalId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(key!) })
      .setIssuer(SCRAPER_TOKEN_ISSUER)
      .setAudience(SCRAPER_TOKEN_AUDIENCE)
      .setSubject(clientUserId)
      .setJti(randomUUID())
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresAt)
      .sign(key!);
    return { token, expiresAt: new Date(expiresAt * 1000).toISOString() };
  },

  verify: async (token, requestExternalId) => {
    if (!token) throw new InvalidScraperToken('missing');
    if (token.length > MAX_TOKEN_LENGTH) throw new InvalidScraperToken('too long');
    const byId = new Map((await keys()).map((key) => [keyIdOf(key), key]));
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(
        token,
        (header) => {
          const key = header.kid === undefined ? undefined : byId.get(header.kid);
          if (!key) throw new errors.JWSSignatureVerificationFailed();
          return key;
        },
        {
          algorithms: ['HS256'],
          issuer: SCRAPER_TOKEN_ISSUER,
          audience: SCRAPER_TOKEN_AUDIENCE,
          requiredClaims: ['sub', 'jti', 'iat', 'exp', 'cid', 'req'],
          // A token never lives longer than it was issued for, whatever its exp says.
          maxTokenAge: SCRAPER_TOKEN_TTL_SECONDS,
          currentDate: now(),
        },
      ));
    } catch (error) {
      if (error instanceof errors.JOSEError) throw new InvalidScraperToken(error.code);
      throw error;
    }
    const claims: ScraperClaims = {
      clientId: stringClaim(payload, 'cid'),
      clientUserId: stringClaim(payload, 'sub'),
      requestExternalId: stringClaim(payload, 'req'),
      tokenId: stringClaim(payload, 'jti'),
      expiresAt: new Date((payload.exp as number) * 1000).toISOString(),
    };
    if (claims.requestExternalId !== requestExternalId) throw new InvalidScraperToken('another request');
    return claims;
  },
});
