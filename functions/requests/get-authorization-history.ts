import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { pageQueryOf } from '#lib/http/page-query';
import { pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { authorizationHistory } from '#lib/requests/authorization-history-service';
import { authorizationHistoryQueryValidator } from '#lib/validation/generated/per-schema/authorization-history-query';

/**
 * GET /api/external/v1.1/Requests/{externalId}/authorization/history: every change of the request's
 * authorization, newest first, paged with ?pageSize= and ?cursor=. A key restricted to one organization
 * is not shown the ids of other organizations' runs.
 */
export const handler = endpoint(async (event) => {
  const externalId = pathId(event, 'externalId');
  const page = pageQueryOf(event.queryStringParameters, authorizationHistoryQueryValidator);
  return json(200, await authorizationHistory.page(scopeOf(event), externalId, page));
});
