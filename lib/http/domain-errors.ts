import { VersionConflict } from '#lib/concurrency';
import { Conflict, DomainError, type DomainErrorKind, RateLimited } from '#lib/errors';
import { HttpProblem } from './problem.ts';

/** The one place domain failures get their HTTP status. A new kind fails typecheck until it has one. */
const STATUS_OF_KIND: Readonly<Record<DomainErrorKind, number>> = {
  invalid: 400,
  'not-found': 404,
  'already-exists': 409,
  conflict: 409,
  'limit-reached': 409,
  stale: 412,
  'too-large': 413,
  'unsupported-content': 415,
  unprocessable: 422,
  'rate-limited': 429,
  unauthenticated: 401,
};

/** When trying again may succeed (a quota refills, concurrent writers calm down): seconds, else undefined. */
const retryAfterOf = (error: DomainError) => {
  if (error instanceof RateLimited) return error.retryAfterSeconds;
  if (error instanceof Conflict) return error.retryAfterSeconds;
  return undefined;
};

/** The problem a domain error answers with: its message as `detail`, its details as extension members. */
export const problemOf = (error: DomainError): HttpProblem => {
  const retryAfter = retryAfterOf(error);
  return new HttpProblem(
    STATUS_OF_KIND[error.kind],
    error.message,
    { ...error.details },
    retryAfter === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(retryAfter))) },
  );
};

/**
 * The refusals of idempotent retries (idempotency.ts), by the name Powertools gives its errors:
 * importing the library here would put it in every function's bundle. Its own messages quote the
 * hashed key; these are written for the client.
 */
const IDEMPOTENCY_PROBLEMS: Readonly<Record<string, () => HttpProblem>> = {
  IdempotencyValidationError: () =>
    new HttpProblem(
      422,
      'This Idempotency-Key was already used for a different request (another method, path or body). Send a new key for a new request.',
    ),
  IdempotencyAlreadyInProgressError: () =>
    new HttpProblem(
      409,
      'A request with this Idempotency-Key is still in progress. Retry once it has completed to get its response.',
      {},
      { 'Retry-After': '1' },
    ),
};

/**
 * Concurrent writers won every retry of a write whose service names no subject of its own (the services that do
 * answer changedConcurrently): the client may simply try again, so a 409 that says when, never a 500.
 */
const CONTENDED = () =>
  new HttpProblem(409, 'The resource is being changed concurrently; retry.', {}, { 'Retry-After': '1' });

/** An HttpProblem as it is, a domain error mapped; anything else is not the client's to see (undefined). */
export const asProblem = (error: unknown): HttpProblem | undefined => {
  if (error instanceof HttpProblem) return error;
  if (error instanceof DomainError) return problemOf(error);
  if (error instanceof VersionConflict) return CONTENDED();
  if (error instanceof Error && Object.hasOwn(IDEMPOTENCY_PROBLEMS, error.name)) {
    return IDEMPOTENCY_PROBLEMS[error.name]!();
  }
  return undefined;
};
