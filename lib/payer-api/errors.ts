/**
 * How a call to a payer (its token endpoint or its FHIR PAS endpoint) fails, as named errors the run
 * tells apart by class (or by `name`, across a Lambda boundary). Messages are ours, fixed: never a token,
 * an assertion, a URL's query or a word of the payer's answer (which may quote PHI).
 */

/** The payer did not answer within the time allowed (PAS allows it 15 s). Retried with back-off. */
export class PayerTimeout extends Error {
  constructor() {
    super('The payer did not answer in time');
    this.name = 'PayerTimeout';
  }
}

/**
 * The payer could not take the call now: 429, a 5xx, or no connection. Retried with back-off, not before
 * `retryAfterSeconds` when its Retry-After said so.
 */
export class PayerUnavailable extends Error {
  constructor(
    readonly status: number | null,
    readonly retryAfterSeconds: number | null,
  ) {
    super(status === null ? 'The payer could not be reached' : `The payer answered ${status}`);
    this.name = 'PayerUnavailable';
  }
}

/** The FHIR endpoint refused the access token (401): withToken fetches a new one once and retries. */
export class TokenRejected extends Error {
  constructor() {
    super('The payer refused the access token');
    this.name = 'TokenRejected';
  }
}

/** Why an answer was not read: nothing of it is kept. */
export type AnswerRejection = 'too_large' | 'too_deep' | 'not_json' | 'inexact_number' | 'redirect' | 'not_a_token';

/** The payer's answer cannot be read safely (larger than allowed, nested too deep, not JSON, a redirect). */
export class PayerAnswerRejected extends Error {
  constructor(readonly reason: AnswerRejection) {
    super(`The payer's answer was refused: ${reason}`);
    this.name = 'PayerAnswerRejected';
  }
}

/**
 * The payer's token endpoint refused our client assertion (400 or 401, `invalid_client` and the like): the
 * connection's client id, key registration or scope is wrong, and asking again will not help. The run
 * ends `credentials_refused` and the connection needs attention. `oauthError` is the OAuth error code when
 * the payer gave one of the usual shape (RFC 6749 §5.2), else null.
 */
export class CredentialsRefused extends Error {
  constructor(
    readonly status: number,
    readonly oauthError: string | null,
  ) {
    super(`The payer's token endpoint refused the client assertion (${status}${oauthError ? `, ${oauthError}` : ''})`);
    this.name = 'CredentialsRefused';
  }
}

/** A payer URL that the policy (lib/payer-api/payer-url-policy.ts) does not allow. */
export class PayerUrlRefused extends Error {
  constructor(readonly problem: string) {
    super(`The payer URL ${problem}`);
    this.name = 'PayerUrlRefused';
  }
}

/**
 * The API client has no key that may sign now (none was ever made: `rotate-payer-signing-key`, or every
 * one is retired). Nothing was sent to the payer.
 */
export class NoSigningKey extends Error {
  constructor() {
    super('The API client has no payer signing key that may sign now');
    this.name = 'NoSigningKey';
  }
}
