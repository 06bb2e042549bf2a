import { PayerAnswerRejected, PayerTimeout, PayerUnavailable, PayerUrlRefused, TokenRejected } from './errors.ts';
import type { PayerTokenAnswer, PayerTokenRequest } from './lambda-token-source.ts';
import type { FhirAnswer, FhirOperationCall } from './pas-transport.ts';
import type { PayerCall, PayerCallResult } from './payer-task-context.ts';

/*
 * One PAS call as the tasks make it: a token from the payer token function, the call, and on a 401 one
 * new token and one more call (the payer may have revoked the token early); a second 401 means the
 * payer no longer accepts us. Transport failures become results the tasks branch on, never exceptions
 * carrying a payer's words. A warm task keeps each connection's token in memory (never in the table or a
 * log) until shortly before it expires, so a group's inquiries ask the token function once.
 */

/** Tokens a warm task keeps, at most (one per connection it called). */
const MAX_KEPT_TOKENS = 1_000;
/** A token is asked again this long before it expires, or a tenth of its life when that is shorter. */
const RENEW_MARGIN_MS = 60_000;

export interface PayerGatewayDependencies {
  token: (request: PayerTokenRequest) => Promise<PayerTokenAnswer>;
  post: (call: FhirOperationCall) => Promise<FhirAnswer>;
  now?: () => number;
}

type KeptToken = { accessToken: string; reuseUntil: number };

/** A connection's token, from memory while it is fresh, else from the token function (which caches too). */
const tokenKeeper = (deps: PayerGatewayDependencies) => {
  const kept = new Map<string, KeptToken>();
  const now = deps.now ?? Date.now;
  return async (call: PayerCall, refresh: boolean): Promise<PayerTokenAnswer> => {
    const key = `${call.clientId}\n${call.payerConnectionId}`;
    const held = kept.get(key);
    if (!refresh && held && now() < held.reuseUntil)
      return { accessToken: held.accessToken, expiresAt: held.reuseUntil };
    kept.delete(key);
    const answer = await deps.token({ clientId: call.clientId, payerConnectionId: call.payerConnectionId, refresh });
    if ('accessToken' in answer) {
      const life = answer.expiresAt - now();
      kept.set(key, {
        accessToken: answer.accessToken,
        reuseUntil: answer.expiresAt - Math.min(RENEW_MARGIN_MS, life / 10),
      });
      if (kept.size > MAX_KEPT_TOKENS) kept.delete(kept.keys().next().value!);
    }
    return answer;
  };
};

type TokenOutcome = { accessToken: string } | PayerCallResult;

const tokenOutcomeOf = (answer: PayerTokenAnswer): TokenOutcome => {
  if ('accessToken' in answer) return answer;
  if ('unavailable' in answer) return { kind: 'unavailable', retryAfterSeconds: answer.unavailable };
  return answer.refused === 'credentials_refused' ? { kind: 'credentials_refused' } : { kind: 'no_payer_connection' };
};

/** The call with one token; a refused token is `undefined` (ask a new one), any other failure a result. */
async function callWith(
  deps: PayerGatewayDependencies,
  call: PayerCall,
  accessToken: string,
): Promise<PayerCallResult | undefined> {
  try {
    const answer = await deps.post({
      baseUrl: call.endpoint.fhirBaseUrl,
      operation: call.operation,
      ...(call.method ? { method: call.method } : {}),
      accessToken,
      ...(call.bundle ? { body: call.bundle } : {}),
      ...(call.timeoutMs === undefined ? {} : { timeoutMs: call.timeoutMs }),
    });
    return { kind: 'answer', status: answer.status, body: answer.body };
  } catch (error) {
    if (error instanceof TokenRejected) return undefined;
    if (error instanceof PayerTimeout) return { kind: 'unavailable', retryAfterSeconds: null, timedOut: true };
    if (error instanceof PayerUnavailable) return { kind: 'unavailable', retryAfterSeconds: error.retryAfterSeconds };
    if (error instanceof PayerAnswerRejected || error instanceof PayerUrlRefused) return { kind: 'answer_rejected' };
    throw error;
  }
}

export const payerGateway = (deps: PayerGatewayDependencies) => {
  const tokenFor = tokenKeeper(deps);
  return async (call: PayerCall): Promise<PayerCallResult> => {
    for (const refresh of [false, true]) {
      const token = tokenOutcomeOf(await tokenFor(call, refresh));
      if (!('accessToken' in token)) return token;
      const result = await callWith(deps, call, token.accessToken);
      if (result) return result;
    }
    // A fresh token refused as well: the payer no longer accepts this connection's credentials.
    return { kind: 'credentials_refused', refusedByApi: true };
  };
};
