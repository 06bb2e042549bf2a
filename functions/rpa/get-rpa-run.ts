import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { pathId, uuidPathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { runReads } from '#lib/runs/run-read-service';

/**
 * GET /api/external/v1/ServiceReviews/requests/{requestExternalId}/rpa/runs/{runId}: the run's
 * status, outcome, steps, values entered and screenshots' metadata.
 */
export const handler = endpoint(async (event) =>
  json(200, await runReads.getRun(scopeOf(event), pathId(event, 'requestExternalId'), uuidPathId(event, 'runId'))),
);
