import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { pageQueryOf } from '#lib/http/page-query';
import { pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { portalAccounts } from '#lib/portal-accounts/service';
import { portalAccountListQueryValidator } from '#lib/validation/generated/per-schema/portal-account-list-query';

/**
 * GET /api/external/v1.1/Portals/accounts/{clientUserId}/list: the accounts of that user's
 * organization, oldest first, paged with ?pageSize= and ?cursor= (the PortalAccountListQuery schema).
 * The route table names the segment {externalId} (one variable name per path level); it carries the
 * clientUserId.
 */
export const handler = endpoint(async (event) => {
  const clientUserId = pathId(event, 'externalId', 'clientUserId');
  const page = pageQueryOf(event.queryStringParameters, portalAccountListQueryValidator);
  return json(200, await portalAccounts.list(scopeOf(event), clientUserId, page));
});
