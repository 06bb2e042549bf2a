import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import type { StartBody } from '#lib/runs/run-start';
import { runStarts } from '#lib/runs/run-start-service';
import { checkAuthStatusBatchValidator } from '#lib/validation/generated/per-schema/check-auth-status-batch';

/**
 * POST /api/external/v1/ServiceReviews/requests/rpa/batch/check-auth-status
 * {clientUserId, requestExternalIds: [1..25]} → 202 {batchId, executionId, total} and the batch's
 * Location: one run per request, checked on the portal two at a time; each request's authorization
 * is updated. Any unknown request → 404 naming them, any request no portal account can be chosen for
 * → 422 naming them with the reason (docs/rpa.md), and nothing is started. Idempotent with an
 * Idempotency-Key header (lib/http/idempotency.ts).
 */
export const handler = endpoint<StartBody & { requestExternalIds: string[] }>(
  async (event) => {
    const batch = await runStarts.startCheckAuthStatus(scopeOf(event), event.body);
    return json(
      202,
      { batchId: batch.batchId, executionId: batch.executionArn, total: batch.items.length },
      { Location: resourceUrl(event, 'rpa/get-check-auth-status', { batchId: batch.batchId }) },
    );
  },
  { json: { validator: checkAuthStatusBatchValidator, absentBody: {} }, idempotency: idempotentRequests() },
);
