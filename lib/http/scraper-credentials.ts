import { parseCookie, stringifySetCookie } from 'cookie';
import type { ApiEvent } from './api-event.ts';
import { header } from './path.ts';

/*
 * How a scraper token reaches the scraper session (docs/rpa.md, "The scraper session"):
 * `Authorization: Bearer` (API clients), or the session cookie a browser got in exchange for a
 * `?token=` link. The link's token is exchanged at once (303 to the URL without it), so the address
 * bar, bookmarks, reloads and the Referer of anything the page loads never carry it.
 */

/** The session cookie's name. Not `__Host-`: that prefix requires `Path=/`, and this cookie is scoped to one session. */
export const SCRAPER_SESSION_COOKIE = 'scraper_token';

type Event = Pick<
  ApiEvent,
  'headers' | 'multiValueHeaders' | 'queryStringParameters' | 'multiValueQueryStringParameters'
>;

/** `Authorization: Bearer <token>`, if that is what the request carries. */
export const bearerToken = (event: Pick<ApiEvent, 'headers'>): string | undefined =>
  /^Bearer\s+(\S+)\s*$/i.exec(header(event, 'authorization') ?? '')?.[1];

/**
 * The session cookie's value. Every Cookie header counts: over HTTP/2 a browser may send its
 * cookies as several fields, which a REST API hands over in multiValueHeaders.
 */
export const cookieToken = (event: Pick<ApiEvent, 'headers' | 'multiValueHeaders'>): string | undefined => {
  const fields = event.multiValueHeaders?.cookie ?? [header(event, 'cookie') ?? ''];
  // Undecoded: a token is base64url and dots, and anything else is simply not a valid token.
  return parseCookie(fields.join('; '), { decode: (value) => value })[SCRAPER_SESSION_COOKIE];
};

/** `?token=` (present, even empty: a link is being exchanged), else undefined. */
export const queryToken = (event: Pick<Event, 'queryStringParameters'>): string | undefined =>
  event.queryStringParameters?.token ?? undefined;

/** The session's URL as the client reached it, without `token` (any other query parameter kept). */
export const withoutToken = (sessionUrl: string, event: Pick<Event, 'multiValueQueryStringParameters'>): URL => {
  const url = new URL(sessionUrl);
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (name === 'token') continue;
    for (const value of values ?? []) url.searchParams.append(name, value);
  }
  return url;
};

/**
 * The Set-Cookie that carries `token` for one session: HttpOnly (no script reads it), SameSite=Strict
 * (no request another site starts carries it), scoped to the session's path (another
 * request's session never sees it), Secure on https (never over the local http gateway, where a
 * browser would drop it), and gone when the token expires.
 */
export const sessionCookie = (token: string, session: URL, expiresAt: string, now = new Date()): string =>
  stringifySetCookie(
    {
      name: SCRAPER_SESSION_COOKIE,
      value: token,
      path: session.pathname,
      maxAge: Math.max(0, Math.floor((Date.parse(expiresAt) - now.getTime()) / 1000)),
      httpOnly: true,
      secure: session.protocol === 'https:',
      sameSite: 'strict',
    },
    { encode: (value) => value },
  );

/**
 * A browser following a link from another site: its SameSite=Strict cookie stays behind, on that
 * navigation and on every redirect of it (a reload keeps that origin too). The page it gets instead
 * reloads itself once: a navigation our own page starts, which carries the cookie.
 */
export const isCrossSiteNavigation = (event: Pick<ApiEvent, 'headers'>): boolean =>
  header(event, 'sec-fetch-site') === 'cross-site' && header(event, 'sec-fetch-mode') === 'navigate';
