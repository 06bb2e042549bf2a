/**
 * The failures the domain (requests, attachments, portal accounts) names, in its own words and
 * without HTTP: lib/http/domain-errors.ts maps each kind to a status, in one place, at the edge.
 * The message is what clients read (the problem's `detail`), so it is written for them and never
 * quotes PHI or secrets; `details` are machine-readable facts (which parameter or field, which
 * limit) that become extension members of the problem.
 */
export type DomainErrorKind =
  | 'not-found'
  | 'already-exists'
  | 'conflict'
  | 'limit-reached'
  | 'stale'
  | 'invalid'
  | 'too-large'
  | 'unsupported-content'
  | 'unprocessable'
  | 'rate-limited'
  | 'unauthenticated';

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;

  constructor(
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Nothing by that name, or nothing the caller may see: tenants never learn the difference. */
export class NotFound extends DomainError {
  readonly kind = 'not-found';
  /** `what` names it for the client, e.g. `Request A-1`. */
  constructor(readonly what: string) {
    super(`${what} was not found.`);
  }
}

/** A create whose id is taken. */
export class AlreadyExists extends DomainError {
  readonly kind = 'already-exists';
  constructor(readonly what: string) {
    super(`${what} already exists.`);
  }
}

/**
 * The current state refuses the operation (concurrent writers, a status that does not allow it), not the
 * input. `retryAfterSeconds` when the same request may succeed later (concurrent writers kept winning).
 */
export class Conflict extends DomainError {
  readonly kind = 'conflict';
  constructor(
    message: string,
    details: Record<string, unknown> = {},
    readonly retryAfterSeconds?: number,
  ) {
    super(message, details);
  }
}

/** A bound on how many of something may exist has been reached. */
export class LimitReached extends DomainError {
  readonly kind = 'limit-reached';
}

/** The caller's precondition (If-Match, a version) no longer holds: someone else wrote first. */
export class Stale extends DomainError {
  readonly kind = 'stale';
}

/** Input the domain refuses; details say where (`parameter`, `field`, `reason`). */
export class Invalid extends DomainError {
  readonly kind = 'invalid';
}

/** Content larger than its limit (details carry `limitBytes`). */
export class TooLarge extends DomainError {
  readonly kind = 'too-large';
}

/** Content of a type the domain does not accept, or that is not what it claims to be. */
export class UnsupportedContent extends DomainError {
  readonly kind = 'unsupported-content';
}

/** Well-formed input the current state of things cannot act on (details say why, as a `reason` code). */
export class Unprocessable extends DomainError {
  readonly kind = 'unprocessable';
}

/** A caller the API key does not authenticate (a public route's own credential: a payer's channel secret) is missing or wrong. */
export class Unauthenticated extends DomainError {
  readonly kind = 'unauthenticated';
}

/** A rate or quota of the client's is used up until `retryAfterSeconds` from now. */
export class RateLimited extends DomainError {
  readonly kind = 'rate-limited';
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    details: Record<string, unknown> = {},
  ) {
    super(message, details);
  }
}

/** `new Invalid(…)` as a function, for modules that build many. */
export const invalid = (message: string, details?: Record<string, unknown>) => new Invalid(message, details);

/** A document that failed its JSON Schema; rendered as the spec's Validation result, not as a problem. */
export class ValidationFailed extends Error {
  constructor(readonly errors: string[]) {
    super('Validation failed');
    this.name = 'ValidationFailed';
  }
}
