import { endpoint, scopeOf } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { rpa } from '#lib/rpa/service';
import { checkAuthStatusBatchValidator } from '#lib/validation/generated/per-schema/check-auth-status-batch';

/**
 * POST /api/external/v1/ServiceReviews/requests/rpa/batch/check-auth-status
 * {clientUserId, requestExternalIds: [1..25]} → 202 {batchId, executionId, total} and the batch's
 * Location: one run per request, checked on the portal two at a time; each request's authorization
 * is updated. Any unknown request → 404 naming them, and nothing is started. Idempotent with an
 * Idempotency-Key header (lib/http/idempotency.ts).
 */
export const handler = endpoint<{ clientUserId: string; requestExternalIds: string[] }>(
  async (event) => {
    const { clientUserId, requestExternalIds } = event.body;
    const batch = await rpa.startCheckAuthStatus(scopeOf(event), clientUserId, requestExternalIds);
    return json(
      202,
      { batchId: batch.batchId, executionId: batch.executionArn, total: batch.items.length },
      { Location: resourceUrl(event, 'rpa/get-check-auth-status', { batchId: batch.batchId }) },
    );
  },
  { json: { validator: checkAuthStatusBatchValidator, absentBody: {} }, idempotency: idempotentRequests() },
);
