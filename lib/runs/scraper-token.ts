import { createHash, randomUUID } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import { type Env, environment } from '#lib/config/environment';
import { type SigningKeySource, signingKeysFromEnvironment, signingKeysOnce } from '#lib/crypto/key-sources';
import { InvalidScraperToken } from './errors.ts';

/*
 * The scraper token: a JWT (HS256) that lets its holder read one request's scraper session for 15
 * minutes (docs/rpa.md). Its key is resolved from the environment once per container, by the same
 * resolver as the cursor signing keys (lib/crypto/key-sources.ts):
 *
 *   RPA_TOKEN_KEY set          → comma-separated base64/base64url keys of ≥ 32 bytes; the first signs,
 *                                all verify (rotation). Tests.
 *   else RPA_TOKEN_SECRET_ARN  → the same format, read from Secrets Manager (the CDK app generates the
 *                                secret and lets only the token's signer and verifier read it)
 *   else LOCAL_RPA_TOKEN_KEY_FILE or $LOCAL_STATE_DIR/rpa-token.key → a local 256-bit key (0600)
 *   else                       → configuration error
 */
export const SCRAPER_TOKEN_TTL_SECONDS = 15 * 60;
export const SCRAPER_TOKEN_ISSUER = 'service-review-api';
export const SCRAPER_TOKEN_AUDIENCE = 'scraper-session';
/** Ours are about 450 characters; anything much longer is refused before it is parsed. */
const MAX_TOKEN_LENGTH = 4096;

/**
 * What a valid token grants: one request of one client, on behalf of one client user; and, when an
 * organization-restricted API key asked for it, only that organization's runs (`org`). `keyId`
 * (`akid`) is the API key that asked for it: the token works only while that key is active
 * (checked by the session, lib/runs/runs.ts).
 */
export interface ScraperClaims {
  clientId: string;
  organizationId?: string;
  keyId: string;
  clientUserId: string;
  requestExternalId: string;
  tokenId: string;
  expiresAt: string;
}

/** Who asks for a token, and for what. */
interface ScraperGrant {
  clientId: string;
  organizationId?: string;
  keyId: string;
  clientUserId: string;
  requestExternalId: string;
}

const RPA_TOKEN_KEYS: SigningKeySource = {
  keyVariable: 'RPA_TOKEN_KEY',
  secretArnVariable: 'RPA_TOKEN_SECRET_ARN',
  fileVariable: 'LOCAL_RPA_TOKEN_KEY_FILE',
  fileName: 'rpa-token.key',
  label: 'RPA token',
};

export const scraperTokenKeysFromEnvironment = (env: Env = environment()) =>
  signingKeysFromEnvironment(RPA_TOKEN_KEYS, env);

/** The token keys of this container. */
export const scraperTokenKeys = signingKeysOnce(RPA_TOKEN_KEYS);

/** A key's id in the token header: which of the rotation's keys signed it (a hash prefix, not the key). */
const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('base64url').slice(0, 12);

export interface ScraperTokens {
  sign(grant: ScraperGrant): Promise<{ token: string; expiresAt: string }>;
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
  sign: async ({ clientId, organizationId, keyId, clientUserId, requestExternalId }) => {
    const [key] = await keys();
    const issuedAt = Math.floor(now().getTime() / 1000);
    const expiresAt = issuedAt + SCRAPER_TOKEN_TTL_SECONDS;
    const token = await new SignJWT({
      cid: clientId,
      akid: keyId,
      req: requestExternalId,
      ...(organizationId ? { org: organizationId } : {}),
    })
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
          requiredClaims: ['sub', 'jti', 'iat', 'exp', 'cid', 'akid', 'req'],
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
      ...(payload.org === undefined ? {} : { organizationId: stringClaim(payload, 'org') }),
      keyId: stringClaim(payload, 'akid'),
      clientUserId: stringClaim(payload, 'sub'),
      requestExternalId: stringClaim(payload, 'req'),
      tokenId: stringClaim(payload, 'jti'),
      expiresAt: new Date((payload.exp as number) * 1000).toISOString(),
    };
    if (claims.requestExternalId !== requestExternalId) throw new InvalidScraperToken('another request');
    return claims;
  },
});
