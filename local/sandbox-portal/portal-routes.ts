import type { IncomingMessage, ServerResponse } from 'node:http';
import { readForm } from './forms.ts';
import { OPERATOR_PATHS } from './operator.ts';
import { homePage, messagePage, priorAuthorizationPage, SCRIPT, STYLESHEET, statusLookupPage } from './pages.ts';
import { codePage, elsewhere, type Portal, redirect, type Session, sendPage, signInPage } from './portal-state.ts';
import { statusLookup, submit } from './prior-authorizations.ts';
import { expiredCookie, sessionOf, signedForm, signedIn } from './sessions.ts';
import { logIn, verifyCode } from './sign-in.ts';

/* Which answer a request gets: the operator's, a public page's, a signed-in page's, 405 or 404. */

/** Every path and the methods it takes, for 405 (with Allow) versus 404. */
const ALLOWED = new Map([
  ['/', 'GET'],
  ['/login', 'GET, POST'],
  ['/login/totp', 'GET, POST'],
  ['/logout', 'POST'],
  ['/home', 'GET'],
  ['/prior-authorizations/new', 'GET'],
  ['/prior-authorizations', 'POST'],
  ['/authorizations/status', 'GET, POST'],
  ['/assets/portal.css', 'GET'],
  ['/assets/portal.js', 'GET'],
  ...OPERATOR_PATHS,
]);

type PublicPage = (portal: Portal, req: IncomingMessage, res: ServerResponse) => unknown;

function asset(type: string, body: string): PublicPage {
  return (portal, _req, res) => {
    res.writeHead(200, { ...portal.securityHeaders, 'content-type': type });
    res.end(body);
  };
}

/** Verification codes, in a half-signed-in session; anyone else is sent to sign in. */
const totp: PublicPage = (portal, req, res) => {
  const session = sessionOf(portal, req);
  if (session?.stage !== 'totp') return redirect(portal, res, '/login');
  return req.method === 'GET' ? sendPage(portal, res, 200, codePage(portal)) : verifyCode(portal, req, res, session);
};

/** The pages anyone reaches: assets and signing in and out. */
const PUBLIC_PAGES: Record<string, PublicPage> = {
  'GET /assets/portal.css': asset('text/css; charset=utf-8', STYLESHEET),
  'GET /assets/portal.js': asset('text/javascript; charset=utf-8', SCRIPT),
  'GET /': (portal, req, res) =>
    redirect(portal, res, sessionOf(portal, req)?.stage === 'signed-in' ? '/home' : '/login'),
  'GET /login': (portal, req, res) => {
    if (portal.hostile?.mode === 'redirect-login') {
      return redirect(portal, res, elsewhere(portal, 'redirect-login', '/login')!, {}, 302);
    }
    if (sessionOf(portal, req)?.stage === 'signed-in') return redirect(portal, res, '/home');
    return sendPage(portal, res, 200, signInPage(portal));
  },
  'POST /login': async (portal, req, res) => {
    if (portal.hostile?.mode === 'redirect-post') {
      await readForm(req);
      // 307 keeps the method and the body: a browser that follows it posts the password there.
      return redirect(portal, res, elsewhere(portal, 'redirect-post', '/login')!, {}, 307);
    }
    return logIn(portal, req, res);
  },
  'GET /login/totp': totp,
  'POST /login/totp': totp,
  'POST /logout': async (portal, req, res) => {
    const session = signedIn(portal, req, res);
    if (!session) return;
    await signedForm(req, session);
    portal.sessions.delete(session.id);
    return redirect(portal, res, '/login', { 'set-cookie': expiredCookie });
  },
};

type SignedInPage = (portal: Portal, req: IncomingMessage, res: ServerResponse, session: Session) => unknown;

/** The pages of a signed-in user; anyone else is sent to sign in. */
const SIGNED_IN_PAGES: Record<string, SignedInPage> = {
  'GET /home': (portal, _req, res, session) => sendPage(portal, res, 200, homePage(session)),
  'GET /prior-authorizations/new': (portal, _req, res, session) =>
    sendPage(portal, res, 200, priorAuthorizationPage(session)),
  'POST /prior-authorizations': submit,
  'GET /authorizations/status': (portal, _req, res, session) =>
    portal.hostile?.mode === 'redirect-status'
      ? redirect(portal, res, elsewhere(portal, 'redirect-status', '/authorizations/status')!, {}, 302)
      : sendPage(portal, res, 200, statusLookupPage(session)),
  'POST /authorizations/status': statusLookup,
};

export async function route(portal: Portal, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://portal');
  const path = url.pathname;
  if (portal.hangPaths.has(path)) return; // never answered; close() drops the connection
  const method = req.method ?? 'GET';
  if (OPERATOR_PATHS.get(path) === method) return portal.operator.route(req, res, url);
  const endpoint = `${method} ${path}`;
  const open = PUBLIC_PAGES[endpoint];
  if (open) return void (await open(portal, req, res));
  const page = SIGNED_IN_PAGES[endpoint];
  if (page) {
    const session = signedIn(portal, req, res);
    if (session) await page(portal, req, res, session);
    return;
  }
  const allow = ALLOWED.get(path);
  if (allow) {
    const notAllowed = messagePage('error', 'Not allowed', 'This page does not take that method.');
    return sendPage(portal, res, 405, notAllowed, { allow });
  }
  sendPage(portal, res, 404, messagePage('not-found', 'Not found', 'There is no such page.'));
}
