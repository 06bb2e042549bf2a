import { apiKeyIdOf, scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { pathId } from '#lib/http/path';
import { absoluteUrl, resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { accessTokens } from '#lib/runs/access-token-service';
import { rpaAccessRequestValidator } from '#lib/validation/generated/per-schema/rpa-access-request';

/**
 * POST /api/external/v1/ServiceReviews/requests/{requestExternalId}/rpa {clientUserId} →
 * 200 {accessToken, scraperUri}: a 15-minute scraper token for this request on behalf of that
 * client user (404 for an unknown request or client user), and the absolute URI of the scraper
 * session. The URI carries nothing secret: the token travels separately (Authorization: Bearer, or
 * a `?token=` link that the session exchanges for a cookie). The token names the API key that asked
 * for it, and works only while that key does.
 */
export const handler = endpoint<{ clientUserId: string }>(
  async (event) => {
    const requestExternalId = pathId(event, 'requestExternalId');
    const caller = { ...scopeOf(event), keyId: apiKeyIdOf(event) };
    const { accessToken } = await accessTokens.issueAccessToken(caller, requestExternalId, event.body.clientUserId);
    const scraperUri = absoluteUrl(event, resourceUrl(event, 'rpa/get-scraper-session', { requestExternalId }));
    return json(200, { accessToken, scraperUri });
  },
  { json: { validator: rpaAccessRequestValidator, absentBody: {} } },
);
