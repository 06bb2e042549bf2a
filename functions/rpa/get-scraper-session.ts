import { auditSubject } from '#lib/http/audit';
import { type ApiEvent, endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { HttpProblem } from '#lib/http/problem';
import { baseHeaders, json } from '#lib/http/response';
import { prefersHtml, scraperSessionPage } from '#lib/http/scraper-session-page';
import { InvalidScraperToken } from '#lib/rpa/scraper-token';
import { rpa } from '#lib/rpa/service';

/** The token: `Authorization: Bearer <token>`, else `?token=<token>` (for a link a browser can open). */
const scraperTokenOf = (event: ApiEvent) => {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(event, 'authorization') ?? '');
  return bearer?.[1] ?? event.queryStringParameters?.token;
};

const invalidToken = () =>
  new HttpProblem(
    401,
    'A valid scraper token for this request is required: Authorization: Bearer <accessToken>, or ?token=<accessToken>.',
    {},
    { 'WWW-Authenticate': 'Bearer realm="scraper-session", error="invalid_token"' },
  );

/**
 * GET /api/external/v1/ServiceReviews/requests/{requestExternalId}/rpa/session, authenticated by the
 * scraper token (no API key: the gateway lets the call through). The request's latest runs with
 * their steps, values entered and 60-second screenshot URLs: JSON, or a page for a browser.
 */
export const handler = endpoint(async (event) => {
  const requestExternalId = pathId(event, 'requestExternalId');
  let claims: Awaited<ReturnType<typeof rpa.verifyAccessToken>>;
  try {
    claims = await rpa.verifyAccessToken(scraperTokenOf(event), requestExternalId);
  } catch (error) {
    if (error instanceof InvalidScraperToken) throw invalidToken();
    throw error;
  }
  // No authorizer ran: the audit trail learns the caller from the verified token.
  auditSubject(event, { clientId: claims.clientId, clientUserId: claims.clientUserId, tokenId: claims.tokenId });
  const session = await rpa.session(claims);
  // The page's URL may carry the token: no Referer may take it to the screenshots' host.
  const headers = { Vary: 'Accept, Authorization', 'Referrer-Policy': 'no-referrer' };
  if (!prefersHtml(header(event, 'accept'))) return json(200, session, headers);
  const page = scraperSessionPage(session);
  return { statusCode: 200, headers: { ...baseHeaders, ...headers, ...page.headers }, body: page.body };
});
