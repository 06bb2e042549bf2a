import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { pathId } from '#lib/http/path';
import { badRequest } from '#lib/http/problem';
import { json } from '#lib/http/response';
import type { PageRequest } from '#lib/portal-accounts/portal-accounts';
import { portalAccounts } from '#lib/portal-accounts/service';

const pageRequestOf = (query: Record<string, string | undefined> | null): PageRequest => {
  const { pageSize, cursor } = query ?? {};
  if (pageSize !== undefined && !/^[0-9]{1,3}$/.test(pageSize)) {
    throw badRequest('pageSize must be an integer from 1 to 100.', { parameter: 'pageSize' });
  }
  return { ...(pageSize !== undefined ? { pageSize: Number(pageSize) } : {}), ...(cursor ? { cursor } : {}) };
};

/**
 * GET /api/external/v1.1/Portals/accounts/{clientUserId}/list: the accounts of that user's
 * organization, oldest first, paged with ?pageSize= and ?cursor=. The route table names the
 * segment {externalId} (one variable name per path level); it carries the clientUserId.
 */
export const handler = endpoint(async (event) => {
  const clientUserId = pathId(event, 'externalId', 'clientUserId');
  return json(
    200,
    await portalAccounts.list(clientIdOf(event), clientUserId, pageRequestOf(event.queryStringParameters)),
  );
});
