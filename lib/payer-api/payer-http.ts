import { JsonBodyRefused, parseJsonBody } from '#lib/json/safe-json';
import { PayerAnswerRejected, PayerTimeout, PayerUnavailable } from './errors.ts';

/**
 * One HTTP exchange with a payer (its token endpoint or its FHIR endpoint), bounded: the whole exchange,
 * answer included, within `timeoutMs`; the answer read as a stream and dropped past `maxBytes`; parsed
 * with the limits of our own request bodies (lib/json/safe-json.ts: nesting depth, exact numbers). Every
 * failure is one of the named errors of ./errors.ts, never the network library's (its messages may quote
 * the URL).
 */

/** The largest payer answer read: a PAS ClaimResponse Bundle is tens of KB; more is refused, not stored. */
export const MAX_PAYER_ANSWER_BYTES = 5 * 1024 * 1024;

export interface PayerExchange {
  status: number;
  headers: Headers;
  /** The answer's bytes, when `readsBody` wanted them for this status (else empty: the stream was cancelled). */
  body: Uint8Array;
}

interface ExchangeLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Whether the answer of this status is read (a 503's page is not). */
  readsBody: (status: number) => boolean;
}

/** Reads the stream to its end, or throws PayerAnswerRejected('too_large') as soon as it passes `maxBytes`. */
const readBounded = async (response: Response, maxBytes: number, abort: AbortController): Promise<Uint8Array> => {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    abort.abort();
    throw new PayerAnswerRejected('too_large');
  }
  if (!response.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Stops the transfer: the rest is never read.
      abort.abort();
      await reader.cancel().catch(() => undefined);
      throw new PayerAnswerRejected('too_large');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
};

/** A failure of fetch or of reading, as ours. */
const asPayerError = (error: unknown, timeout: AbortSignal): Error => {
  if (error instanceof PayerAnswerRejected) return error;
  if (timeout.aborted || (error as Error | undefined)?.name === 'TimeoutError') return new PayerTimeout();
  // Refused, reset, DNS, TLS: no answer at all.
  return new PayerUnavailable(null, null);
};

/** Calls the payer (POST unless `init` says otherwise) and reads its answer within the limits. Redirects are not followed (see pas-transport.ts). */
export const exchangeWithPayer = async (
  url: URL,
  init: RequestInit,
  limits: ExchangeLimits,
): Promise<PayerExchange> => {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const abort = new AbortController();
  try {
    const response = await fetch(url, {
      ...init,
      method: init.method ?? 'POST',
      redirect: 'manual',
      signal: AbortSignal.any([timeout, abort.signal]),
    });
    if (!limits.readsBody(response.status)) {
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, headers: response.headers, body: new Uint8Array() };
    }
    const body = await readBounded(response, limits.maxBytes, abort);
    return { status: response.status, headers: response.headers, body };
  } catch (error) {
    throw asPayerError(error, timeout);
  }
};

/** The answer as JSON, parsed with our body limits; PayerAnswerRejected when it is not JSON we may read. */
export const parsePayerJson = (body: Uint8Array): unknown => {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new PayerAnswerRejected('not_json');
  }
  try {
    return parseJsonBody(text);
  } catch (error) {
    if (!(error instanceof JsonBodyRefused)) throw error;
    if (error.details.maxDepth !== undefined) throw new PayerAnswerRejected('too_deep');
    // The parser's two other refusals: not JSON at all, or a number a double cannot hold as written.
    throw new PayerAnswerRejected(/not valid JSON/.test(error.message) ? 'not_json' : 'inexact_number');
  }
};

/**
 * Retry-After (RFC 9110 §10.2.3) in seconds from `now`: delay-seconds, or an HTTP-date (a date in the past is
 * 0); null when absent or unreadable.
 */
export const retryAfterSecondsOf = (value: string | null, now: number = Date.now()): number | null => {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at) || !/[a-z]/i.test(trimmed)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
};
