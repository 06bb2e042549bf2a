import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AssertionContext, AssertionRefused, verifyClientAssertion } from './client-assertion.ts';
import { mediaTypeOf, Refusal, readBody, sendJson } from './http.ts';

/**
 * The token endpoint (POST /auth/token, SMART Backend Services): client_credentials with a private_key_jwt
 * assertion, answered with an opaque random bearer token of short life. Refusals follow RFC 6749 §5.2:
 * 400 invalid_request (not a form, a field missing), unsupported_grant_type, invalid_scope; 401
 * invalid_client for any assertion that fails, never saying which check it failed.
 */
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const MAX_FORM_BYTES = 16 * 1024;
/** RFC 6749 scope-token characters, space separated. */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/;
const MAX_SCOPE = 1000;
const DEFAULT_SCOPE = 'system/Claim.write system/ClaimResponse.read';

export interface AccessToken {
  clientId: string;
  scope: string;
  expiresAtMs: number;
}

/** Tokens issued, until they expire. */
export const tokenStore = (now: () => number) => {
  const tokens = new Map<string, AccessToken>();
  return {
    issue(clientId: string, scope: string, ttlSeconds: number): string {
      for (const [token, { expiresAtMs }] of tokens) if (expiresAtMs <= now()) tokens.delete(token);
      const token = randomBytes(32).toString('base64url');
      tokens.set(token, { clientId, scope, expiresAtMs: now() + ttlSeconds * 1000 });
      return token;
    },
    /** The token's grant while it lives; undefined for an unknown or expired one. */
    check(token: string): AccessToken | undefined {
      const grant = tokens.get(token);
      return grant && grant.expiresAtMs > now() ? grant : undefined;
    },
  };
};

export type TokenStore = ReturnType<typeof tokenStore>;

export interface TokenEndpoint extends AssertionContext {
  tokens: TokenStore;
  ttlSeconds: number;
}

const oauthError = (status: number, error: string) => new Refusal(status, { error });

/** The form's fields: the first of a repeated name (a repeated field is refused, RFC 6749 §3.2). */
async function tokenForm(req: IncomingMessage): Promise<Map<string, string>> {
  if (mediaTypeOf(req) !== 'application/x-www-form-urlencoded') throw oauthError(400, 'invalid_request');
  const body = await readBody(req, MAX_FORM_BYTES, () => oauthError(400, 'invalid_request'));
  const form = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    if (form.has(name)) throw oauthError(400, 'invalid_request');
    form.set(name, value);
  }
  return form;
}

/** POST /auth/token. */
export async function issueToken(endpoint: TokenEndpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await tokenForm(req);
  const grantType = form.get('grant_type');
  const assertion = form.get('client_assertion');
  if (!grantType || !assertion || form.get('client_assertion_type') !== ASSERTION_TYPE) {
    throw oauthError(400, 'invalid_request');
  }
  if (grantType !== 'client_credentials') throw oauthError(400, 'unsupported_grant_type');
  const scope = form.get('scope') ?? DEFAULT_SCOPE;
  if (scope.length > MAX_SCOPE || !SCOPE.test(scope)) throw oauthError(400, 'invalid_scope');
  let clientId: string;
  try {
    clientId = await verifyClientAssertion(endpoint, assertion);
  } catch (error) {
    if (error instanceof AssertionRefused) throw oauthError(401, 'invalid_client');
    throw error;
  }
  // A client_id beside the assertion must name the same client (RFC 7521 §4.2).
  const named = form.get('client_id');
  if (named !== undefined && named !== clientId) throw oauthError(401, 'invalid_client');
  const accessToken = endpoint.tokens.issue(clientId, scope, endpoint.ttlSeconds);
  sendJson(
    res,
    200,
    { access_token: accessToken, token_type: 'bearer', expires_in: endpoint.ttlSeconds, scope },
    { pragma: 'no-cache' },
  );
}
