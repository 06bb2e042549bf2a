import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { pathId } from '#lib/http/path';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import type { CancelBody } from '#lib/payer-api/cancel-start';
import { submissions } from '#lib/payer-api/submission-service';
import { cancelRequestValidator } from '#lib/validation/generated/per-schema/cancel-request';

/**
 * POST /api/external/v1.1/Requests/{externalId}/cancel {clientUserId, payerConnectionExternalId?} → 202
 * {runId, status} and the run's Location: the claim the payer holds for the request is cancelled through
 * its PAS API (certification type 3); the authorization becomes `cancelled` when the payer confirms it.
 * 422 `not_supported_on_portal` (followed through the portal), `not_submitted` (nothing sent to the
 * payer's API); 409 `already_cancelled`, `cancel_in_progress`. Idempotent with an Idempotency-Key header.
 */
export const handler = endpoint<CancelBody>(
  async (event) => {
    const externalId = pathId(event, 'externalId');
    const run = await submissions.cancel(scopeOf(event), externalId, event.body);
    return json(
      202,
      { runId: run.runId, status: run.status },
      { Location: resourceUrl(event, 'rpa/get-rpa-run', { requestExternalId: externalId, runId: run.runId }) },
    );
  },
  { json: { validator: cancelRequestValidator }, idempotency: idempotentRequests() },
);
