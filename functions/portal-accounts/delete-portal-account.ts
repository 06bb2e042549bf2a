import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { noContent } from '#lib/http/response';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { portalAccountService } from '#lib/portal-accounts/portal-accounts';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';

const accounts = portalAccountService({ store: dynamoPortalAccountStore, tenants: dynamoTenantStore });

/** DELETE /api/external/v1.1/Portals/accounts/{externalId}: 204, with its encrypted secrets; 412 on a stale If-Match. */
export const handler = endpoint(async (event) => {
  await accounts.remove(clientIdOf(event), pathId(event, 'externalId'), header(event, 'if-match'));
  return noContent();
});
