import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import {
  etagOf,
  type NewPortalAccount,
  portalAccountService,
  representationOf,
} from '#lib/portal-accounts/portal-accounts';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';

const accounts = portalAccountService({ store: dynamoPortalAccountStore, tenants: dynamoTenantStore });

/**
 * POST /api/external/v1.1/Portals/accounts (and the obsolete v1 mirror): creates an account in the
 * organization of body.clientUserId. 201 + Location; 404 unknown clientUserId; 409 if the
 * externalId exists. Password and TOTP secret are encrypted before storage and never returned.
 */
export const handler = endpoint<NewPortalAccount>(
  async (event) => {
    const account = await accounts.create(clientIdOf(event), event.body);
    const collection = event.resource.slice(
      0,
      event.resource.indexOf('/Portals/accounts') + '/Portals/accounts'.length,
    );
    return json(201, representationOf(account), {
      ETag: etagOf(account),
      Location: `${collection}/${encodeURIComponent(account.externalId)}`,
    });
  },
  { json: { schema: 'PortalAccount' } },
);
