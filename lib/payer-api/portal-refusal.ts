import type { StoredRequest } from '#lib/entities/request';
import { Unprocessable } from '#lib/errors';

/*
 * A request whose authorization the portal automation read lives at the payer's portal, where a claim
 * update or a cancel is the portal's own form: the payer's API knows no claim of ours to change. A
 * submit or a cancel of such a request is refused before anything is sent (docs/payer-api.md).
 */

class NotSupportedOnPortal extends Unprocessable {
  constructor(requestExternalId: string, operation: 'submit' | 'cancel') {
    super(
      `Request ${requestExternalId}'s authorization is followed through the payer's portal: a ${operation} through the payer's API is not supported for it.`,
      { reason: 'not_supported_on_portal', requestExternalId },
    );
  }
}

/** Throws NotSupportedOnPortal when the request's authorization was last read through the portal. */
export function refuseOnPortal(request: StoredRequest, operation: 'submit' | 'cancel'): void {
  if (request.authorization.channel === 'portal') throw new NotSupportedOnPortal(request.externalId, operation);
}
