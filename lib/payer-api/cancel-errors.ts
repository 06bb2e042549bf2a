import { Conflict, Unprocessable } from '#lib/errors';

/*
 * Why a cancel is refused before anything is sent: a fixed `reason` clients can branch on
 * (docs/payer-api.md, "Cancelling"). Nothing at the payer to cancel is a 422 (the request as it stands
 * cannot be cancelled); a cancel already made or under way is a 409 (the state, not the input).
 */

/** No claim or claim update of the request was ever sent to the payer's API. */
export class NotSubmitted extends Unprocessable {
  constructor(requestExternalId: string) {
    super(
      `Request ${requestExternalId} was never submitted to its payer's API: there is no claim to cancel. Nothing was sent.`,
      { reason: 'not_submitted', requestExternalId },
    );
  }
}

/** The payer confirmed a cancel already. */
export class AlreadyCancelled extends Conflict {
  constructor(requestExternalId: string) {
    super(`Request ${requestExternalId}'s authorization is cancelled already. Nothing was sent.`, {
      reason: 'already_cancelled',
      requestExternalId,
    });
  }
}

/** A cancel of the request is queued or being sent; its run says how it ends. */
export class CancelInProgress extends Conflict {
  constructor(requestExternalId: string, runId: string) {
    super(`A cancel of request ${requestExternalId} is under way (run ${runId}). Nothing more was sent.`, {
      reason: 'cancel_in_progress',
      requestExternalId,
    });
  }
}
