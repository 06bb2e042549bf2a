import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { pathId } from '#lib/http/path';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import type { StartBody } from '#lib/runs/run-start';
import { runStarts } from '#lib/runs/run-start-service';
import { viewOnPageRequestValidator } from '#lib/validation/generated/per-schema/view-on-page-request';

/**
 * POST /api/external/v1/ServiceReviews/requests/{requestExternalId}/rpa/view-on-page
 * {clientUserId, portalAccountExternalId?} → 202 {runId, executionId, status} and the run's Location:
 * the portal account is chosen (or 422 says why none can be), a run is queued and its execution started; the worker fills the portal's form with the request and stops before submitting.
 * Idempotent with an Idempotency-Key header (lib/http/idempotency.ts).
 */
export const handler = endpoint<StartBody>(
  async (event) => {
    const requestExternalId = pathId(event, 'requestExternalId');
    const run = await runStarts.startViewOnPage(scopeOf(event), requestExternalId, event.body);
    return json(
      202,
      { runId: run.runId, executionId: run.executionArn, status: run.status },
      { Location: resourceUrl(event, 'rpa/get-rpa-run', { requestExternalId, runId: run.runId }) },
    );
  },
  { json: { validator: viewOnPageRequestValidator, absentBody: {} }, idempotency: idempotentRequests() },
);
