import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { ClientRegistry } from './clients.ts';

/**
 * A client assertion (RFC 7523 private_key_jwt, as SMART Backend Services profiles it), checked the way a
 * payer must: signed by a key of the client's registered JWKS (the header names its `kid`), RS384 or
 * ES384, `iss` = `sub` = the client_id, `aud` = the token URL exactly, `exp` at most 5 minutes ahead, and
 * a `jti` never seen before (kept until the assertion's own expiry). Whatever fails, the caller learns
 * only that it failed: the token endpoint answers invalid_client, and nothing of the assertion is logged.
 */
const ALGORITHMS = ['RS384', 'ES384'];
const MAX_LIFETIME_SECONDS = 300;
const MAX_JTI = 256;

export class AssertionRefused extends Error {
  constructor() {
    super('The client assertion is not acceptable.');
  }
}

/** jti values seen, per client, until the assertion that carried them expires. */
export const replayCache = () => {
  const seen = new Map<string, number>();
  return {
    /** False when the jti was seen; else remembers it until `expiresAtMs`. Synchronous: no race. */
    claim(clientId: string, jti: string, expiresAtMs: number, nowMs: number): boolean {
      for (const [key, until] of seen) if (until <= nowMs) seen.delete(key);
      const key = `${clientId}\u0000${jti}`;
      if (seen.has(key)) return false;
      seen.set(key, expiresAtMs);
      return true;
    },
  };
};

export interface AssertionContext {
  clients: ClientRegistry;
  tokenUrl: string;
  replays: ReturnType<typeof replayCache>;
  now: () => number;
}

/** The client's id if the assertion passes every check; AssertionRefused otherwise. */
export async function verifyClientAssertion(context: AssertionContext, assertion: string): Promise<string> {
  let clientId: string;
  try {
    const header = decodeProtectedHeader(assertion);
    if (typeof header.kid !== 'string' || !header.kid) throw new AssertionRefused();
    const issuer = decodeJwt(assertion).iss;
    if (typeof issuer !== 'string') throw new AssertionRefused();
    clientId = issuer;
  } catch {
    throw new AssertionRefused();
  }
  const client = context.clients.get(clientId);
  if (!client) throw new AssertionRefused();
  const nowSeconds = Math.floor(context.now() / 1000);
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(assertion, client.keys, {
      algorithms: ALGORITHMS,
      issuer: clientId,
      subject: clientId,
      audience: context.tokenUrl,
      requiredClaims: ['exp', 'jti'],
      currentDate: new Date(context.now()),
    }));
  } catch {
    // A bad signature, an unknown kid, an unreachable JWKS, a wrong claim: all the same to the client.
    throw new AssertionRefused();
  }
  const { exp, jti } = payload as { exp: number; jti: unknown };
  if (exp - nowSeconds > MAX_LIFETIME_SECONDS) throw new AssertionRefused();
  if (typeof jti !== 'string' || !jti || jti.length > MAX_JTI) throw new AssertionRefused();
  if (!context.replays.claim(clientId, jti, exp * 1000, context.now())) throw new AssertionRefused();
  return clientId;
}
