import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { json, noContent } from '#lib/http/response';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { etagOf, portalAccountService, representationOf } from '#lib/portal-accounts/portal-accounts';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';

const accounts = portalAccountService({ store: dynamoPortalAccountStore, tenants: dynamoTenantStore });

/** GET /api/external/v1.1/Portals/accounts/{externalId}: one account, secrets shown only as set/changed. */
export const handler = endpoint(async (event) => {
  const account = await accounts.get(clientIdOf(event), pathId(event, 'externalId'));
  const etag = etagOf(account);
  if (header(event, 'if-none-match') === etag) return { ...noContent({ ETag: etag }), statusCode: 304 };
  return json(200, representationOf(account), { ETag: etag });
});
