import { payerUrlPolicy } from '#lib/config/settings';
import { CredentialsRefused, PayerAnswerRejected, PayerUnavailable } from '../errors.ts';
import { exchangeWithPayer, parsePayerJson, retryAfterSecondsOf } from '../payer-http.ts';
import { checkPayerUrl, type PayerUrlPolicy } from '../payer-url-policy.ts';
import type { AssertionKey } from '../signing-keys/assertion-key.ts';
import { clientAssertion } from './client-assertion.ts';

/**
 * The SMART Backend Services token request (client_credentials grant, private_key_jwt): one POST of a
 * fresh client assertion to the payer's token endpoint, answered with a bearer token and its life. The
 * exchange is bounded as every payer call is (./payer-http.ts). A refusal of the assertion (400, 401, 403:
 * `invalid_client` and the like) is CredentialsRefused; 429 and 5xx PayerUnavailable; no answer in time
 * PayerTimeout. The token and the assertion are credentials: returned, never logged.
 */

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** A token endpoint's answer is a few hundred bytes. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;
const TOKEN_TIMEOUT_MS = 15_000;
/** When the payer does not say how long its token lives: SMART's usual five minutes. */
const DEFAULT_TOKEN_SECONDS = 300;
/** At most a day, whatever the payer says: a token is asked for again at the latest then. */
const MAX_TOKEN_SECONDS = 86_400;
/** A bearer token as it may go in an Authorization header (RFC 6750 b64token, bounded). */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MAX_TOKEN_CHARACTERS = 8192;
/** An OAuth error code (RFC 6749 §5.2) kept only when it looks like one: it may be recorded. */
const OAUTH_ERROR = /^[a-z][a-z_]{0,63}$/;

export interface TokenRequest {
  tokenUrl: string;
  /** The client_id the payer issued. */
  clientId: string;
  /** Space-separated SMART scopes, as the payer endpoint's directory entry says. */
  scope: string;
  key: AssertionKey;
  policy?: PayerUrlPolicy;
  timeoutMs?: number;
  now?: Date;
}

export interface AccessToken {
  accessToken: string;
  /** Epoch milliseconds: when the payer stops taking it. */
  expiresAt: number;
}

const oauthErrorOf = (body: Uint8Array): string | null => {
  try {
    const error = (parsePayerJson(body) as { error?: unknown } | null)?.error;
    return typeof error === 'string' && OAUTH_ERROR.test(error) ? error : null;
  } catch {
    return null;
  }
};

/** The token of a 200 answer, checked: a bearer token we can send, and a positive life. */
const tokenOf = (body: Uint8Array, now: Date): AccessToken => {
  const answer = parsePayerJson(body) as Record<string, unknown> | null;
  const token = answer?.access_token;
  const type = answer?.token_type;
  const expiresIn = answer?.expires_in ?? DEFAULT_TOKEN_SECONDS;
  if (
    typeof token !== 'string' ||
    token.length > MAX_TOKEN_CHARACTERS ||
    !BEARER_TOKEN.test(token) ||
    typeof type !== 'string' ||
    type.toLowerCase() !== 'bearer' ||
    typeof expiresIn !== 'number' ||
    !(expiresIn > 0)
  ) {
    throw new PayerAnswerRejected('not_a_token');
  }
  return { accessToken: token, expiresAt: now.getTime() + Math.min(expiresIn, MAX_TOKEN_SECONDS) * 1000 };
};

export const requestToken = async (request: TokenRequest): Promise<AccessToken> => {
  const url = checkPayerUrl(request.tokenUrl, request.policy ?? payerUrlPolicy());
  const now = request.now ?? new Date();
  const assertion = await clientAssertion({
    clientId: request.clientId,
    tokenUrl: request.tokenUrl,
    key: request.key,
    now,
  });
  const answer = await exchangeWithPayer(
    url,
    {
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: CLIENT_ASSERTION_TYPE,
        client_assertion: assertion,
        scope: request.scope,
      }).toString(),
    },
    {
      timeoutMs: request.timeoutMs ?? TOKEN_TIMEOUT_MS,
      maxBytes: MAX_TOKEN_ANSWER_BYTES,
      readsBody: (status) => status < 300 || [400, 401, 403].includes(status),
    },
  );
  const { status } = answer;
  if (status >= 200 && status < 300) return tokenOf(answer.body, now);
  if ([400, 401, 403].includes(status)) throw new CredentialsRefused(status, oauthErrorOf(answer.body));
  if (status === 429 || status >= 500) {
    throw new PayerUnavailable(status, retryAfterSecondsOf(answer.headers.get('retry-after')));
  }
  throw new PayerAnswerRejected(status >= 300 && status < 400 ? 'redirect' : 'not_a_token');
};
