import { DomainError, type DomainErrorKind } from '#lib/errors';
import { HttpProblem } from './problem.ts';

/** The one place domain failures get their HTTP status. A new kind fails typecheck until it has one. */
export const STATUS_OF_KIND: Readonly<Record<DomainErrorKind, number>> = {
  invalid: 400,
  'not-found': 404,
  'already-exists': 409,
  conflict: 409,
  'limit-reached': 409,
  stale: 412,
  'too-large': 413,
  'unsupported-content': 415,
};

/** The problem a domain error answers with: its message as `detail`, its details as extension members. */
export const problemOf = (error: DomainError): HttpProblem =>
  new HttpProblem(STATUS_OF_KIND[error.kind], error.message, { ...error.details });

/** An HttpProblem as it is, a domain error mapped; anything else is not the client's to see (undefined). */
export const asProblem = (error: unknown): HttpProblem | undefined => {
  if (error instanceof HttpProblem) return error;
  if (error instanceof DomainError) return problemOf(error);
  return undefined;
};
