import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { json, noContent } from '#lib/http/response';
import { etagOf, representationOf } from '#lib/portal-accounts/portal-accounts';
import { portalAccounts } from '#lib/portal-accounts/service';

/** GET /api/external/v1.1/Portals/accounts/{externalId}: one account, secrets shown only as set/changed. */
export const handler = endpoint(async (event) => {
  const account = await portalAccounts.get(clientIdOf(event), pathId(event, 'externalId'));
  const etag = etagOf(account);
  if (header(event, 'if-none-match') === etag) return { ...noContent({ ETag: etag }), statusCode: 304 };
  return json(200, representationOf(account), { ETag: etag });
});
