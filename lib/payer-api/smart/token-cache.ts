import { TokenRejected } from '../errors.ts';
import type { PayerUrlPolicy } from '../payer-url-policy.ts';
import type { AssertionKey } from '../signing-keys/assertion-key.ts';
import { clientSigningKey } from '../signing-keys/client-signing-key.ts';
import { type AccessToken, requestToken } from './token-client.ts';

/**
 * Access tokens per payer connection, in this process's memory only (module scope: one Lambda container
 * reuses them across invocations), never in the table and never logged. A token is reused until shortly
 * before it expires (REFRESH_MARGIN: 60 s, or a tenth of its life when that is shorter), and concurrent
 * calls of one connection share one token request. `withToken` runs a call with the connection's token;
 * when the payer refuses the token (TokenRejected: a 401), it drops it, asks for a new one once and calls
 * once more.
 */

export interface SmartConnection {
  /** Our API client (tenant) that holds the connection: its key signs the assertions. */
  apiClientId: string;
  /** The connection's own id (its externalId). */
  connectionId: string;
  /** The client_id the payer issued to the organization. */
  payerClientId: string;
  tokenUrl: string;
  scope: string;
}

export interface TokenOptions {
  /** The key that signs for an API client: its key set in the table by default (clientSigningKey). */
  keyOf?: (apiClientId: string) => Promise<AssertionKey>;
  policy?: PayerUrlPolicy;
  timeoutMs?: number;
  /** The clock, in epoch milliseconds. */
  now?: () => number;
}

const REFRESH_MARGIN_MS = 60_000;
/** Connections one container keeps tokens for; the least recently fetched goes first. */
const MAX_CACHED_TOKENS = 1000;

interface CachedToken extends AccessToken {
  obtainedAt: number;
}

const tokens = new Map<string, CachedToken>();
const fetching = new Map<string, Promise<CachedToken>>();

/** Every field that changes which token the payer gives: a connection edited in place gets a new one. */
const cacheKeyOf = (connection: SmartConnection) =>
  JSON.stringify([
    connection.apiClientId,
    connection.connectionId,
    connection.payerClientId,
    connection.tokenUrl,
    connection.scope,
  ]);

const isFresh = (token: CachedToken, now: number) =>
  now < token.expiresAt - Math.min(REFRESH_MARGIN_MS, (token.expiresAt - token.obtainedAt) / 10);

const fetchToken = async (connection: SmartConnection, options: TokenOptions, now: number): Promise<CachedToken> => {
  const key = await (options.keyOf ?? clientSigningKey)(connection.apiClientId);
  const token = await requestToken({
    tokenUrl: connection.tokenUrl,
    clientId: connection.payerClientId,
    scope: connection.scope,
    key,
    now: new Date(now),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
  return { ...token, obtainedAt: now };
};

/** The connection's token: the cached one while fresh, else one fetched (once, however many ask at once). */
const tokenFor = (connection: SmartConnection, options: TokenOptions): Promise<CachedToken> => {
  const key = cacheKeyOf(connection);
  const now = (options.now ?? Date.now)();
  const cached = tokens.get(key);
  if (cached && isFresh(cached, now)) return Promise.resolve(cached);
  let pending = fetching.get(key);
  if (!pending) {
    pending = fetchToken(connection, options, now)
      .then((token) => {
        tokens.delete(key);
        tokens.set(key, token);
        if (tokens.size > MAX_CACHED_TOKENS) tokens.delete(tokens.keys().next().value!);
        return token;
      })
      .finally(() => fetching.delete(key));
    fetching.set(key, pending);
  }
  return pending;
};

/** Drops the token the payer refused, unless another call has already replaced it. */
const forget = (connection: SmartConnection, refused: CachedToken) => {
  const key = cacheKeyOf(connection);
  if (tokens.get(key) === refused) tokens.delete(key);
};

/**
 * The connection's access token for a caller in another process (the PAS tasks ask the payer token
 * function for it): the cached one while fresh; `refresh` drops it first, after the payer refused it.
 */
export const accessTokenFor = async (
  connection: SmartConnection,
  options: TokenOptions & { refresh?: boolean } = {},
): Promise<AccessToken> => {
  if (options.refresh) tokens.delete(cacheKeyOf(connection));
  const { accessToken, expiresAt } = await tokenFor(connection, options);
  return { accessToken, expiresAt };
};

export const withToken = async <T>(
  connection: SmartConnection,
  call: (accessToken: string) => Promise<T>,
  options: TokenOptions = {},
): Promise<T> => {
  const token = await tokenFor(connection, options);
  try {
    return await call(token.accessToken);
  } catch (error) {
    if (!(error instanceof TokenRejected)) throw error;
    forget(connection, token);
    const renewed = await tokenFor(connection, options);
    return call(renewed.accessToken);
  }
};
