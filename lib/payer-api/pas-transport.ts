import { payerUrlPolicy } from '#lib/config/settings';
import { PayerAnswerRejected, PayerUnavailable, TokenRejected } from './errors.ts';
import { exchangeWithPayer, MAX_PAYER_ANSWER_BYTES, parsePayerJson, retryAfterSecondsOf } from './payer-http.ts';
import { checkPayerUrl, type PayerUrlPolicy } from './payer-url-policy.ts';

/**
 * HTTP to a payer's Da Vinci PAS endpoint: one FHIR operation or interaction (PAS's operations, and the
 * subscription's create, read, renewal and `$status`), as FHIR JSON with the access token,
 * its answer bounded (15 s, 5 MB, our JSON depth limit) and sorted into what the run can act on:
 * - 2xx, and a 4xx with a body (the payer's OperationOutcome): `{status, body}`, the body parsed, for the
 *   answer reader (a 4xx without a body: `body: null`);
 * - 401: TokenRejected (withToken fetches a new token once and calls again);
 * - 429 and 5xx: PayerUnavailable, with Retry-After in seconds when the payer gave one; no answer at all
 *   (refused, reset): PayerUnavailable with no status;
 * - no answer within the timeout: PayerTimeout;
 * - a redirect (not followed: the token would go along), an answer too large, too deep or not JSON:
 *   PayerAnswerRejected.
 */

/**
 * What is called, as a path under the FHIR base: PAS's two operations and CDex's `$submit-attachment` (POST), a Subscription's create
 * (POST `Subscription`), read (GET), renewal (PUT) and end (DELETE `Subscription/<id>`), its `$status` (GET).
 */
export type PayerOperation =
  | 'Claim/$submit'
  | 'Claim/$inquire'
  | 'Claim/$submit-attachment'
  | 'Subscription'
  | `Subscription/${string}`;
export type PayerMethod = 'POST' | 'PUT' | 'GET' | 'DELETE';

/** PAS gives the payer 15 seconds to answer (its specification's synchronous response time). */
export const PAS_TIMEOUT_MS = 15_000;

export interface FhirOperationCall {
  /** The payer's FHIR base URL (its endpoint in the operator directory), with or without a final slash. */
  baseUrl: string;
  operation: PayerOperation;
  /** POST unless said. */
  method?: PayerMethod;
  accessToken: string;
  /** The PAS Bundle (or Parameters, or Subscription), sent as JSON; none for a GET or DELETE. */
  body?: unknown;
  /** PAS_TIMEOUT_MS unless less is left (the task's end is nearer) or a test needs less. */
  timeoutMs?: number;
  /** The process's PAYER_URL_POLICY unless given. */
  policy?: PayerUrlPolicy;
}

export interface FhirAnswer {
  status: number;
  /** The parsed answer; null for a 4xx without a body. */
  body: unknown;
}

const FHIR_JSON = 'application/fhir+json';

const isUnavailable = (status: number) => status === 429 || status >= 500;

/** `[base]/Claim/$submit`: the operation appended to the base URL's path. */
const operationUrl = (baseUrl: string, operation: PayerOperation, policy: PayerUrlPolicy): URL => {
  const base = checkPayerUrl(baseUrl, policy);
  base.pathname = `${base.pathname.replace(/\/+$/, '')}/${operation}`;
  return base;
};

export const postFhirOperation = async (call: FhirOperationCall): Promise<FhirAnswer> => {
  const url = operationUrl(call.baseUrl, call.operation, call.policy ?? payerUrlPolicy());
  const answer = await exchangeWithPayer(
    url,
    {
      method: call.method ?? 'POST',
      headers: {
        ...(call.body === undefined ? {} : { 'content-type': FHIR_JSON }),
        accept: FHIR_JSON,
        authorization: `Bearer ${call.accessToken}`,
      },
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    },
    {
      timeoutMs: call.timeoutMs ?? PAS_TIMEOUT_MS,
      maxBytes: MAX_PAYER_ANSWER_BYTES,
      readsBody: (status) => status !== 401 && !isUnavailable(status) && (status < 300 || status >= 400),
    },
  );
  const { status } = answer;
  if (status === 401) throw new TokenRejected();
  if (isUnavailable(status)) throw new PayerUnavailable(status, retryAfterSecondsOf(answer.headers.get('retry-after')));
  if (status >= 300 && status < 400) throw new PayerAnswerRejected('redirect');
  // A 4xx without a body, or a DELETE's 204 No Content.
  if ((status >= 400 || status === 204) && answer.body.byteLength === 0) return { status, body: null };
  return { status, body: parsePayerJson(answer.body) };
};
