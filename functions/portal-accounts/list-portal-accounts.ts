import { endpoint, scopeOf } from '#lib/http/endpoint';
import { pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import type { PageRequest } from '#lib/portal-accounts/portal-accounts';
import { portalAccounts } from '#lib/portal-accounts/service';
import { portalAccountListQueryValidator } from '#lib/validation/generated/per-schema/portal-account-list-query';
import { assertValid } from '#lib/validation/validator';

/** A number written in decimal; anything else stays a string, for the schema to refuse by its type. */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * ?pageSize=&cursor= checked against the PortalAccountListQuery schema: a bad value gets the same
 * Validation result as in the filter body (`/pageSize: Maximum error for value "101". …`). An empty
 * cursor asks for the first page.
 */
const pageRequestOf = (query: Record<string, string | undefined> | null): PageRequest => {
  const { pageSize, cursor } = query ?? {};
  const request = {
    ...(pageSize !== undefined ? { pageSize: DECIMAL.test(pageSize) ? Number(pageSize) : pageSize } : {}),
    ...(cursor ? { cursor } : {}),
  };
  assertValid(portalAccountListQueryValidator, request);
  return request as PageRequest;
};

/**
 * GET /api/external/v1.1/Portals/accounts/{clientUserId}/list: the accounts of that user's
 * organization, oldest first, paged with ?pageSize= and ?cursor=. The route table names the
 * segment {externalId} (one variable name per path level); it carries the clientUserId.
 */
export const handler = endpoint(async (event) => {
  const clientUserId = pathId(event, 'externalId', 'clientUserId');
  return json(200, await portalAccounts.list(scopeOf(event), clientUserId, pageRequestOf(event.queryStringParameters)));
});
