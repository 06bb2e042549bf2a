import { DomainError, Unprocessable } from '#lib/errors';

/**
 * The automation's failures, in one module (as each Powertools package keeps its errors): what its use cases,
 * tasks and functions throw, and what the edge (lib/http/domain-errors.ts) and the state machines' Retry and
 * Catch (by error name) tell apart. The DomainError subclasses reach clients as problem details; the others
 * stay inside the automation.
 */

/** Why the credentials function refuses: fixed codes, named in its error's message and its log line. */
export const REFUSAL_REASONS = [
  'invalid_input',
  'run_not_found',
  'not_a_browser_run',
  'run_ended',
  'not_current_attempt',
  'already_issued',
  'other_account',
  'account_unusable',
  'no_live_execution',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** The refusal as the function throws it: Lambda reports its name as `errorType`, the reason as `errorMessage`. */
export class CredentialsRefused extends Error {
  constructor(readonly reason: RefusalReason) {
    super(reason);
    this.name = 'CredentialsRefused';
  }
}

/** A task for a run that does not exist (or is of another kind): there is nothing to record it on. */
export class RunNotFound extends Error {
  constructor() {
    super('The run does not exist');
    this.name = 'RunNotFound';
  }
}

/** Input that is not the ids the state machine passes. */
export class InvalidTaskInput extends Error {
  constructor(field: string) {
    super(`Task input field ${field} is missing or not a string`);
    this.name = 'InvalidTaskInput';
  }
}

/** Some requests of a batch do not exist (or are another client's): nothing was started. */
export class RequestsNotFound extends DomainError {
  readonly kind = 'not-found';
  constructor(readonly requestExternalIds: string[]) {
    super(`Requests not found: ${requestExternalIds.join(', ')}. No check was started.`, { requestExternalIds });
  }
}

/** Some requests of a batch cannot be automated: no account can be chosen for them; nothing was started. */
export class RequestsNotAutomatable extends Unprocessable {
  constructor(readonly refused: NoPortalAccount[]) {
    super(
      `No portal account can be chosen for ${refused.length === 1 ? 'request' : 'requests'} ${refused
        .map((error) => error.requestExternalId)
        .join(', ')}. No check was started.`,
      { requests: refused.map(({ requestExternalId, reason }) => ({ requestExternalId, reason })) },
    );
  }
}

/** Why no account could be chosen: a fixed code clients can branch on, and its text. */
const NO_ACCOUNT_REASONS = {
  named_disabled: 'The named portal account is disabled.',
  named_not_automated: 'The named portal account is on a portal the automation does not drive.',
  no_payer_match_several_accounts:
    "No active portal account of the organization serves the request's payer, and the organization has several active accounts: name one with portalAccountExternalId.",
  no_payer_and_several_accounts:
    'The request names no payer (patient.PayerId) and the organization has several active portal accounts: name one with portalAccountExternalId.',
  no_active_account: 'The organization has no active portal account.',
  only_account_not_automated:
    "The organization's only active portal account is on a portal the automation does not drive.",
} as const;
export type NoAccountReason = keyof typeof NO_ACCOUNT_REASONS;

/**
 * Why a request of a check-auth-status batch was not started, as a `partial` batch answers it (docs/rpa.md):
 * no channel could be chosen for it (the NoAccountReason), or there is no such request (the outcome's name).
 */
export const BATCH_REFUSAL_REASONS = [
  ...(Object.keys(NO_ACCOUNT_REASONS) as NoAccountReason[]),
  'request_not_found',
] as const;
export type BatchRefusalReason = (typeof BATCH_REFUSAL_REASONS)[number];

/** A request that cannot be automated as it stands: no account can be chosen for it. */
export class NoPortalAccount extends Unprocessable {
  constructor(
    readonly reason: NoAccountReason,
    readonly requestExternalId: string,
  ) {
    super(`Request ${requestExternalId} cannot be automated: ${NO_ACCOUNT_REASONS[reason]}`, {
      reason,
      requestExternalId,
    });
  }
}

/** The worker's own failure for a portal that did not answer: the state machine retries it. */
export class PortalUnavailable extends Error {
  constructor() {
    super('The portal did not answer in time');
    this.name = 'PortalUnavailable';
  }
}

/**
 * The run's portal account is in another session (one login at a time per account): the state
 * machine retries the task later, so the run waits behind the lease rather than beside it.
 */
export class PortalAccountBusy extends Error {
  constructor() {
    super('The portal account is in another automation session');
    this.name = 'PortalAccountBusy';
  }
}

/** Missing, malformed, expired, for another request, or badly signed: the holder learns no more than that. */
export class InvalidScraperToken extends Error {
  constructor(readonly reason: string) {
    super('The scraper token is not valid');
    this.name = 'InvalidScraperToken';
  }
}
