import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import {
  etagOf,
  type PortalAccountInput,
  portalAccountService,
  representationOf,
} from '#lib/portal-accounts/portal-accounts';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';

const accounts = portalAccountService({ store: dynamoPortalAccountStore, tenants: dynamoTenantStore });

/**
 * PUT /api/external/v1.1/Portals/accounts/{externalId}: replaces the non-secret fields; an omitted
 * secret is kept, `totpSecret: null` removes it. If-Match or body.version: 412 when stale.
 */
export const handler = endpoint<PortalAccountInput>(
  async (event) => {
    const externalId = pathId(event, 'externalId');
    const account = await accounts.replace(clientIdOf(event), externalId, event.body, header(event, 'if-match'));
    return json(200, representationOf(account), { ETag: etagOf(account) });
  },
  { json: { schema: 'PortalAccountReplacement' } },
);
