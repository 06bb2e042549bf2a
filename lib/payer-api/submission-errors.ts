import { Conflict, Unprocessable } from '#lib/errors';
import type { MappingProblem } from './pas/mapping-context.ts';

/*
 * Why a submission to a payer's API is refused before anything is sent: each a 422 with a fixed `reason`
 * clients can branch on (docs/payer-api.md, "Submitting").
 */

/** The request's payer has no PAS endpoint in the directory (or the request names no payer): a portal-only payer. */
export class NoPayerApi extends Unprocessable {
  constructor(requestExternalId: string, payerId: string | null) {
    super(
      payerId === null
        ? `Request ${requestExternalId} names no payer (patient.PayerId) and the body names no payer connection: there is no payer API to submit it to.`
        : `Payer ${payerId} has no prior-authorization API we reach; portal drivers never submit.`,
      { reason: 'no_payer_api', requestExternalId },
    );
  }
}

/** The organization has no usable connection to the payer: none, or one that is disabled or needs attention. */
export class NoPayerConnection extends Unprocessable {
  constructor(requestExternalId: string, reason: 'no_payer_connection' | 'payer_connection_not_active') {
    super(
      reason === 'no_payer_connection'
        ? "The organization has no active connection to the request's payer: create one under /v1.1/Payers/connections."
        : 'The payer connection is disabled or needs attention: set it active once the payer accepts our assertions again.',
      { reason, requestExternalId },
    );
  }
}

/** Fields PAS cannot do without are missing or cannot be mapped: each listed with its path in the request. */
export class RequestNotMappable extends Unprocessable {
  constructor(requestExternalId: string, problems: readonly MappingProblem[]) {
    super(
      `Request ${requestExternalId} cannot be submitted to the payer's API: ${problems.length} ${
        problems.length === 1 ? 'field is' : 'fields are'
      } missing or cannot be mapped. Nothing was sent.`,
      {
        reason: 'request_not_mappable',
        requestExternalId,
        problems: problems.map(({ path, reason, message }) => ({ path, reason, message })),
      },
    );
  }
}

/** The payer denied the request: PAS allows no update of a denied request; a new request is needed. */
export class DeniedNotUpdatable extends Unprocessable {
  constructor(requestExternalId: string) {
    super(
      `The payer denied request ${requestExternalId}: a denied prior authorization cannot be updated. Create a new request and submit it.`,
      { reason: 'authorization_denied', requestExternalId },
    );
  }
}

/** The submit names attachments the request does not have available (unknown, still uploading, or deleted). */
export class AttachmentsNotAvailable extends Unprocessable {
  constructor(requestExternalId: string, attachmentIds: readonly string[]) {
    super(
      `Request ${requestExternalId} has no available attachment with ${attachmentIds.length === 1 ? 'this id' : 'these ids'}.`,
      {
        reason: 'attachment_not_available',
        requestExternalId,
        attachmentIds,
      },
    );
  }
}

/** A submission or cancel of the request has not ended: the next one waits for it, so that it knows what it replaces. */
export class SubmissionInProgress extends Conflict {
  constructor(requestExternalId: string, runId: string) {
    super(`A submission of request ${requestExternalId} is under way (run ${runId}). Nothing more was sent.`, {
      reason: 'submission_in_progress',
      requestExternalId,
      runId,
    });
  }
}
