import { randomUUID } from 'node:crypto';
import type { AssertionKey } from '../signing-keys/assertion-key.ts';

/**
 * A SMART Backend Services client assertion (private_key_jwt, RFC 7523): who we are to the payer's token
 * endpoint, signed with the API client's current key. `iss` = `sub` = the client_id the payer issued,
 * `aud` = the token URL, a random `jti` (never reused), and a life of ASSERTION_LIFETIME_SECONDS: SMART
 * allows at most five minutes; four leave room for a payer's clock running ahead. The header carries the
 * key's `kid` (in our JWKS), `alg: RS384`, `typ: JWT`. The assertion is a credential: never logged, never
 * stored, used once.
 */
export const ASSERTION_LIFETIME_SECONDS = 240;

export interface AssertionInput {
  /** The client_id the payer issued to the organization (its connection's). */
  clientId: string;
  tokenUrl: string;
  key: AssertionKey;
  now?: Date;
}

export const clientAssertion = ({ clientId, tokenUrl, key, now = new Date() }: AssertionInput): Promise<string> => {
  const issuedAt = Math.floor(now.getTime() / 1000);
  return key.sign({
    iss: clientId,
    sub: clientId,
    aud: tokenUrl,
    iat: issuedAt,
    exp: issuedAt + ASSERTION_LIFETIME_SECONDS,
    jti: randomUUID(),
  });
};
