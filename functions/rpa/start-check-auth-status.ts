import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import type { BatchBody } from '#lib/runs/run-start';
import { runStarts } from '#lib/runs/run-start-service';
import { checkAuthStatusBatchValidator } from '#lib/validation/generated/per-schema/check-auth-status-batch';

/**
 * POST /api/external/v1/ServiceReviews/requests/rpa/batch/check-auth-status
 * {clientUserId, requestExternalIds: [1..25], partial?} → 202 {batchId, executionId, total} and the
 * batch's Location: one run per request, checked two at a time; each request's authorization is
 * updated. Any unknown request → 404 naming them, any request no portal account can be chosen for →
 * 422 naming them with the reason (docs/rpa.md), and nothing is started; with `partial: true` the
 * others start and those come back in the 202's `requests: [{requestExternalId, reason}]` (refused
 * as without it when none can start). Idempotent with an Idempotency-Key header (lib/http/idempotency.ts).
 * The body's schema is closed: a re-check's `through` never comes from a client.
 */
export const handler = endpoint<Omit<BatchBody, 'through'> & { requestExternalIds: string[] }>(
  async (event) => {
    const { batch, refused } = await runStarts.startCheckAuthStatus(scopeOf(event), event.body);
    return json(
      202,
      {
        batchId: batch.batchId,
        executionId: batch.executionArn,
        total: batch.items.length,
        ...(event.body.partial ? { requests: refused } : {}),
      },
      { Location: resourceUrl(event, 'rpa/get-check-auth-status', { batchId: batch.batchId }) },
    );
  },
  { json: { validator: checkAuthStatusBatchValidator, absentBody: {} }, idempotency: idempotentRequests() },
);
