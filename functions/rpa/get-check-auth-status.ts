import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { uuidPathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { runReads } from '#lib/runs/run-read-service';

/**
 * GET /api/external/v1/ServiceReviews/requests/rpa/batch/check-auth-status/{batchId}: the batch's
 * progress {status, total, done, failed, items: [{requestExternalId, runId, status, outcome, authorization}]}.
 */
export const handler = endpoint(async (event) =>
  json(200, await runReads.batchProgress(scopeOf(event), uuidPathId(event, 'batchId'))),
);
