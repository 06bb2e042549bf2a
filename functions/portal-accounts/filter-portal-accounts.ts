import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import type { FilterRequest } from '#lib/portal-accounts/portal-account-input';
import { portalAccounts } from '#lib/portal-accounts/service';
import { portalAccountFilterValidator } from '#lib/validation/generated/per-schema/portal-account-filter';

/**
 * POST /api/external/v1.1/Portals/accounts/filter: the accounts of clientUserId's organization
 * matching portalId, payerId, status and search (display name or username), oldest first.
 * Paging: pageSize (default 25, max 100) and the previous page's nextCursor; nextCursor null = last page.
 */
export const handler = endpoint<FilterRequest>(
  async (event) => json(200, await portalAccounts.filter(scopeOf(event), event.body)),
  { json: { validator: portalAccountFilterValidator } },
);
