import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/*
 * The channel secret of a subscription (docs/security.md, "Payer notifications"): 32 random bytes, base64url,
 * given to the payer once in the Subscription's channel header (`Authorization: Bearer <secret>`) and sent back
 * on every notification. Only its SHA-256 is stored; a presented secret is hashed and the two digests compared
 * in constant time, so neither the time of the check nor a stolen item gives the secret away.
 */

const digestOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();

/** A new subscription's channel secret, and the hash that is all we keep of it. */
export const newChannelSecret = (): { secret: string; secretHash: string } => {
  const secret = randomBytes(32).toString('base64url');
  return { secret, secretHash: digestOf(secret).toString('hex') };
};

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/;

/** Whether an Authorization header carries the secret whose hash is stored: false when absent or malformed. */
export const presentsSecret = (authorization: string | undefined, secretHash: string): boolean => {
  const presented = BEARER.exec(authorization?.trim() ?? '')?.[1];
  const expected = Buffer.from(secretHash, 'hex');
  // Both sides are 32-byte digests, so the comparison's time says nothing of either.
  const digest = digestOf(presented ?? '');
  return presented !== undefined && expected.length === digest.length && timingSafeEqual(digest, expected);
};
