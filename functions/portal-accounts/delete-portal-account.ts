import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { noContent } from '#lib/http/response';
import { portalAccounts } from '#lib/portal-accounts/service';

/** DELETE /api/external/v1.1/Portals/accounts/{externalId}: 204, with its encrypted secrets; 412 on a stale If-Match. */
export const handler = endpoint(async (event) => {
  await portalAccounts.remove(scopeOf(event), pathId(event, 'externalId'), header(event, 'if-match'));
  return noContent();
});
