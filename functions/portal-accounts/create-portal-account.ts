import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import type { NewPortalAccount } from '#lib/portal-accounts/portal-account-input';
import { etagOf, representationOf } from '#lib/portal-accounts/portal-account-representation';
import { portalAccountsWithSecrets } from '#lib/portal-accounts/service-with-secrets';
import { portalAccountValidator } from '#lib/validation/generated/per-schema/portal-account';

/**
 * POST /api/external/v1.1/Portals/accounts (and the obsolete v1 mirror): creates an account in the
 * organization of body.clientUserId. 201 + Location (on the version that was called); 404 unknown
 * clientUserId; 409 if the externalId exists. Password and TOTP secret are encrypted before
 * storage and never returned. Idempotent with an Idempotency-Key header (lib/http/idempotency.ts).
 */
export const handler = endpoint<NewPortalAccount>(
  async (event) => {
    const account = await portalAccountsWithSecrets.create(scopeOf(event), event.body);
    return json(201, representationOf(account), {
      ETag: etagOf(account),
      Location: resourceUrl(event, 'portal-accounts/get-portal-account', { externalId: account.externalId }),
    });
  },
  { json: { validator: portalAccountValidator }, idempotency: idempotentRequests() },
);
