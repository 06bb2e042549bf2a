import { scopeOf } from '#lib/http/api-event';
import { notModified } from '#lib/http/conditional';
import { endpoint } from '#lib/http/endpoint';
import { pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { etagOf, representationOf } from '#lib/portal-accounts/portal-account-representation';
import { portalAccounts } from '#lib/portal-accounts/service';

/** GET /api/external/v1.1/Portals/accounts/{externalId}: one account, secrets shown only as set/changed. */
export const handler = endpoint(async (event) => {
  const account = await portalAccounts.get(scopeOf(event), pathId(event, 'externalId'));
  const etag = etagOf(account);
  return notModified(event, etag) ?? json(200, representationOf(account), { ETag: etag });
});
