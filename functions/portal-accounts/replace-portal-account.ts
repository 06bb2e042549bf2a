import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import type { PortalAccountInput } from '#lib/portal-accounts/portal-account-input';
import { etagOf, representationOf } from '#lib/portal-accounts/portal-account-representation';
import { portalAccountsWithSecrets } from '#lib/portal-accounts/service-with-secrets';
import { portalAccountReplacementValidator } from '#lib/validation/generated/per-schema/portal-account-replacement';

/**
 * PUT /api/external/v1.1/Portals/accounts/{externalId}: replaces the non-secret fields; an omitted
 * secret is kept, `totpSecret: null` removes it. If-Match or body.version: 412 when stale.
 */
export const handler = endpoint<PortalAccountInput>(
  async (event) => {
    const externalId = pathId(event, 'externalId');
    const account = await portalAccountsWithSecrets.replace(
      scopeOf(event),
      externalId,
      event.body,
      header(event, 'if-match'),
    );
    return json(200, representationOf(account), { ETag: etagOf(account) });
  },
  { json: { validator: portalAccountReplacementValidator } },
);
