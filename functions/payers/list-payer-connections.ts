import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { pageQueryOf } from '#lib/http/page-query';
import { pathId } from '#lib/http/path';
import { absoluteUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { representationOf } from '#lib/payer-connections/payer-connection-representation';
import { payerConnections } from '#lib/payer-connections/service';
import { payerConnectionListQueryValidator } from '#lib/validation/generated/per-schema/payer-connection-list-query';

/**
 * GET /api/external/v1.1/Payers/connections/{clientUserId}/list: the connections of that user's
 * organization, oldest first, paged with ?pageSize= and ?cursor=. The route table names the segment
 * {externalId} (one variable name per path level); it carries the clientUserId.
 */
export const handler = endpoint(async (event) => {
  const clientUserId = pathId(event, 'externalId', 'clientUserId');
  const request = pageQueryOf(event.queryStringParameters, payerConnectionListQueryValidator);
  const page = await payerConnections.list(scopeOf(event), clientUserId, request);
  const base = absoluteUrl(event, '');
  return json(200, { ...page, items: page.items.map((connection) => representationOf(connection, base)) });
});
