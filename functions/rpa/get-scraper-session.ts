import type { ApiEvent } from '#lib/http/api-event';
import { auditSubject } from '#lib/http/audit';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { HttpProblem } from '#lib/http/problem';
import { absoluteUrl, resourceUrl } from '#lib/http/resource-url';
import { baseHeaders, json } from '#lib/http/response';
import {
  bearerToken,
  cookieToken,
  isCrossSiteNavigation,
  queryToken,
  sessionCookie,
  withoutToken,
} from '#lib/http/scraper-credentials';
import { continuePage, prefersHtml, scraperSessionPage } from '#lib/http/scraper-session-page';
import { InvalidScraperToken } from '#lib/runs/errors';
import { scraperAccess } from '#lib/runs/scraper-access-service';

const WWW_AUTHENTICATE = 'Bearer realm="scraper-session", error="invalid_token"';

/** Who reads what: the answer depends on the credential and the Accept; no Referer may leave the page. */
const SESSION_HEADERS = { Vary: 'Accept, Authorization, Cookie', 'Referrer-Policy': 'no-referrer' };

const invalidToken = () =>
  new HttpProblem(
    401,
    'A valid scraper token for this request is required: Authorization: Bearer <accessToken>, the session cookie, or a ?token=<accessToken> link.',
    {},
    { 'WWW-Authenticate': WWW_AUTHENTICATE },
  );

/** The token's claims (its API key still active), told to the audit trail; a 401 otherwise. */
const verified = async (event: ApiEvent, token: string | undefined, requestExternalId: string) => {
  let claims: Awaited<ReturnType<typeof scraperAccess.verifyAccessToken>>;
  try {
    claims = await scraperAccess.verifyAccessToken(token, requestExternalId);
  } catch (error) {
    if (error instanceof InvalidScraperToken) throw invalidToken();
    throw error;
  }
  // No authorizer ran: the audit trail learns the caller from the verified token.
  auditSubject(event, { clientId: claims.clientId, clientUserId: claims.clientUserId, tokenId: claims.tokenId });
  return claims;
};

/**
 * GET /api/external/v1/ServiceReviews/requests/{requestExternalId}/rpa/session, authenticated by the
 * scraper token (no API key: the gateway lets the call through). A `?token=` link is exchanged for
 * the session cookie: 303 to the same URL without the token. Otherwise the token comes from
 * `Authorization: Bearer`, else the cookie, and the answer is the request's latest runs with their
 * steps, values entered and 60-second screenshot URLs: JSON, or a page for a browser.
 */
export const handler = endpoint(async (event) => {
  const requestExternalId = pathId(event, 'requestExternalId');
  const linkToken = queryToken(event);
  if (linkToken !== undefined) {
    const claims = await verified(event, linkToken, requestExternalId);
    const session = new URL(absoluteUrl(event, resourceUrl(event, 'rpa/get-scraper-session', { requestExternalId })));
    return {
      statusCode: 303,
      headers: {
        ...baseHeaders,
        ...SESSION_HEADERS,
        Location: withoutToken(session.href, event).href,
        'Set-Cookie': sessionCookie(linkToken, session, claims.expiresAt),
      },
      body: '',
    };
  }
  const token = bearerToken(event) ?? cookieToken(event);
  const html = prefersHtml(header(event, 'accept'));
  if (token === undefined && html && isCrossSiteNavigation(event)) {
    const page = continuePage();
    const headers = { ...baseHeaders, ...SESSION_HEADERS, ...page.headers, 'WWW-Authenticate': WWW_AUTHENTICATE };
    return { statusCode: 401, headers, body: page.body };
  }
  const session = await scraperAccess.session(await verified(event, token, requestExternalId));
  if (!html) return json(200, session, SESSION_HEADERS);
  const page = scraperSessionPage(session);
  return { statusCode: 200, headers: { ...baseHeaders, ...SESSION_HEADERS, ...page.headers }, body: page.body };
});
