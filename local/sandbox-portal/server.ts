import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import { BadRequest, cookieOf, readForm } from './forms.ts';
import type { Html } from './html.ts';
import { OPERATOR_PATHS, sandboxOperator } from './operator.ts';
import {
  FORM_FIELD_NAMES,
  homePage,
  type LookupResult,
  lockedPage,
  loginPage,
  messagePage,
  priorAuthorizationPage,
  SCRIPT,
  type Signed,
  STYLESHEET,
  statusLookupPage,
  totpPage,
} from './pages.ts';
import {
  SANDBOX_SERVICE_FROM_DATE,
  type SandboxAuthorization,
  type SandboxSeed,
  type SandboxUser,
  sandboxSeed,
} from './seed.ts';

/**
 * The sandbox payer portal: a small server-rendered web app on loopback that behaves like a payer
 * portal as far as a driver can tell (sign-in, two-step verification, lockout, a prior-authorization
 * form, a status lookup). State lives in memory and starts from the seed on every start.
 */
export interface SandboxPortalOptions {
  port?: number;
  host?: string;
  seed?: SandboxSeed;
  /** Requests for these paths (any method) never get an answer: for tests of timeouts. */
  hangPaths?: string[];
  /** The portal leads the browser to another origin: for tests of origin pinning (docs/sandbox-portal.md). */
  hostile?: { mode: HostileMode; origin: string };
  /** The operator's token (operator.ts); random by default, printed by main.ts and `npm start`. */
  operatorToken?: string;
}

/**
 * How a hostile portal leads a browser to `origin` (another site, which must never get a credential):
 * - `redirect-login`: GET /login answers 302 to `<origin>/login`;
 * - `frame-login`: the sign-in page frames `<origin>/frame`;
 * - `post-login`: the sign-in form posts to `<origin>/login`;
 * - `redirect-post`: POST /login answers 307 to `<origin>/login`, which has a browser post the form again there;
 * - `post-totp`: the verification-code form posts to `<origin>/login/totp`;
 * - `redirect-status`: once signed in, GET /authorizations/status answers 302 to `<origin>/authorizations/status`.
 * Its Content-Security-Policy lets frames and forms reach `origin`, as a hostile portal's would.
 */
export type HostileMode =
  | 'redirect-login'
  | 'frame-login'
  | 'post-login'
  | 'redirect-post'
  | 'post-totp'
  | 'redirect-status';

export interface Submission {
  trackingNumber: string;
  username: string;
  values: Record<string, string>;
}

export interface SandboxPortal {
  url: string;
  /** Prior-authorization forms submitted since the start (the automation never submits one). */
  readonly submissions: readonly Submission[];
  /** What provider services would do on the phone: clears a user's failed attempts and lock. */
  unlock(username: string): void;
  /** Sign-in attempts (POST /login) since the start, by username: what a lockout policy counts. */
  loginAttempts(username?: string): number;
  /** The operator's token (docs/sandbox-portal.md, "The operator"): `Authorization: Bearer`, or … */
  operatorToken: string;
  /** … the link a browser opens once: `<url>/operator?token=<operatorToken>`. */
  operatorUrl: string;
  close(): Promise<void>;
}

const MAX_FAILED_LOGINS = 3;
const SESSION_IDLE_MS = 30 * 60 * 1000;
const COOKIE = 'sandbox_session';
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

interface UserState {
  user: SandboxUser;
  failures: number;
  locked: boolean;
}

interface Session extends Signed {
  id: string;
  stage: 'totp' | 'signed-in';
  expiresAt: number;
}

const digest = (text: string) => createHash('sha256').update(text).digest();
/** Compares digests so the time taken says nothing about how much of the password matched. */
const samePassword = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected));

const codeIsValid = (secret: string, code: string) =>
  /^[0-9]{6}$/.test(code) &&
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).validate({
    token: code,
    window: 1,
  }) !== null;

/** The headers of every answer; a hostile portal's CSP also lets frames and forms reach `elsewhere`. */
const securityHeaders = (elsewhere?: string) => ({
  'content-security-policy': elsewhere
    ? `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; frame-src ${elsewhere}; form-action 'self' ${elsewhere}; frame-ancestors 'none'; base-uri 'none'`
    : "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Pages carry PHI: nothing is kept by caches.
  'cache-control': 'no-store',
});

const sessionCookie = (id: string) => `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict`;
const expiredCookie = `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;

export const startSandboxPortal = async (options: SandboxPortalOptions = {}): Promise<SandboxPortal> => {
  const seed = options.seed ?? sandboxSeed;
  const hangPaths = new Set(options.hangPaths ?? []);
  const hostile = options.hostile;
  const elsewhere = (mode: HostileMode, path: string) =>
    hostile?.mode === mode ? new URL(path, hostile.origin).href : undefined;
  const SECURITY_HEADERS = securityHeaders(hostile && new URL(hostile.origin).origin);

  const sendPage = (
    res: ServerResponse,
    status: number,
    page: Html,
    headers: Record<string, string | string[]> = {},
  ) => {
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', ...headers });
    res.end(page.value);
  };

  const redirect = (
    res: ServerResponse,
    location: string,
    headers: Record<string, string | string[]> = {},
    status = 303,
  ) => {
    res.writeHead(status, { ...SECURITY_HEADERS, location, ...headers });
    res.end();
  };

  const codePage = (options: Parameters<typeof totpPage>[0] = {}) =>
    totpPage({
      ...options,
      ...(elsewhere('post-totp', '/login/totp') ? { action: elsewhere('post-totp', '/login/totp') } : {}),
    });

  /** The sign-in page as this portal renders it (a hostile one adds a frame, or posts elsewhere). */
  const signInPage = (options: Parameters<typeof loginPage>[0] = {}) =>
    loginPage({
      ...options,
      ...(elsewhere('frame-login', '/frame') ? { frame: elsewhere('frame-login', '/frame') } : {}),
      ...(elsewhere('post-login', '/login') ? { action: elsewhere('post-login', '/login') } : {}),
    });
  const users = new Map<string, UserState>(
    seed.users.map((user) => [user.username, { user, failures: 0, locked: false }]),
  );
  const members = new Map(seed.members.map((member) => [member.memberId, member]));
  const authorizations: SandboxAuthorization[] = seed.authorizations.map((authorization) => ({ ...authorization }));
  const submissions: Submission[] = [];
  const sessions = new Map<string, Session>();
  const attempts = new Map<string, number>();
  const operatorToken = options.operatorToken ?? randomBytes(32).toString('base64url');
  const operator = sandboxOperator({
    token: operatorToken,
    csrf: randomBytes(24).toString('base64url'),
    authorizations,
    members,
    fromDate: SANDBOX_SERVICE_FROM_DATE,
    send: sendPage,
    redirect,
  });

  const sessionOf = (req: IncomingMessage): Session | undefined => {
    const id = cookieOf(req, COOKIE);
    const session = id ? sessions.get(id) : undefined;
    if (!session) return undefined;
    if (session.expiresAt < Date.now()) {
      sessions.delete(session.id);
      return undefined;
    }
    session.expiresAt = Date.now() + SESSION_IDLE_MS;
    return session;
  };

  const startSession = (username: string, stage: Session['stage']) => {
    const session: Session = {
      id: randomBytes(32).toString('base64url'),
      username,
      stage,
      csrf: randomBytes(24).toString('base64url'),
      expiresAt: Date.now() + SESSION_IDLE_MS,
    };
    sessions.set(session.id, session);
    return session;
  };

  /** Counts a failed sign-in (a wrong password or a wrong code); the third in a row locks the account. */
  const failedAttempt = (state: UserState) => {
    state.failures += 1;
    if (state.failures >= MAX_FAILED_LOGINS) state.locked = true;
    return state.locked;
  };

  const signedIn = (req: IncomingMessage, res: ServerResponse): Session | undefined => {
    const session = sessionOf(req);
    if (session?.stage === 'signed-in') return session;
    redirect(res, '/login');
    return undefined;
  };

  const signedForm = async (req: IncomingMessage, session: Session) => {
    const form = await readForm(req);
    const given = Buffer.from(form.csrf ?? '');
    const expected = Buffer.from(session.csrf);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new BadRequest(403, 'The form has expired. Open the page again.');
    }
    return form;
  };

  const logIn = async (req: IncomingMessage, res: ServerResponse) => {
    const form = await readForm(req);
    const username = form.username ?? '';
    attempts.set(username, (attempts.get(username) ?? 0) + 1);
    const state = users.get(username);
    if (state?.locked) return sendPage(res, 423, lockedPage());
    // An unknown username gets the same answer as a wrong password: the portal does not say which users exist.
    if (!state || !samePassword(form.password ?? '', state.user.password)) {
      if (state && failedAttempt(state)) return sendPage(res, 423, lockedPage());
      return sendPage(res, 401, signInPage({ username, error: 'wrong_password' }));
    }
    if (state.user.totpSecret) {
      return redirect(res, '/login/totp', { 'set-cookie': sessionCookie(startSession(username, 'totp').id) });
    }
    state.failures = 0;
    redirect(res, '/home', { 'set-cookie': sessionCookie(startSession(username, 'signed-in').id) });
  };

  const verifyCode = async (req: IncomingMessage, res: ServerResponse, session: Session) => {
    const form = await readForm(req);
    const state = users.get(session.username)!;
    if (state.locked) {
      sessions.delete(session.id);
      return sendPage(res, 423, lockedPage(), { 'set-cookie': expiredCookie });
    }
    if (!codeIsValid(state.user.totpSecret ?? '', (form.code ?? '').trim())) {
      if (failedAttempt(state)) {
        sessions.delete(session.id);
        return sendPage(res, 423, lockedPage(), { 'set-cookie': expiredCookie });
      }
      return sendPage(res, 401, codePage({ error: 'wrong_code' }));
    }
    state.failures = 0;
    // A new session id once fully signed in, so the half-signed-in cookie is worth nothing.
    sessions.delete(session.id);
    redirect(res, '/home', { 'set-cookie': sessionCookie(startSession(session.username, 'signed-in').id) });
  };

  const submit = async (req: IncomingMessage, res: ServerResponse, session: Session) => {
    const form = await signedForm(req, session);
    const values: Record<string, string> = {};
    for (const [name, value] of Object.entries(form)) if (FORM_FIELD_NAMES.has(name)) values[name] = value;
    const memberId = values['patient.memberId'] ?? '';
    const reference = values.reference ?? '';
    if (!members.has(memberId) || !reference || !values.fromDate) {
      const error = members.has(memberId)
        ? 'Provider reference and from date are required.'
        : 'The member ID is not one of our members.';
      return sendPage(res, 422, priorAuthorizationPage(session, values, { error }));
    }
    const trackingNumber = `SBX-PA-${String(submissions.length + 1).padStart(6, '0')}`;
    submissions.push({ trackingNumber, username: session.username, values });
    if (!authorizations.some((known) => known.memberId === memberId && known.reference === reference)) {
      authorizations.push({ memberId, reference, status: 'pended', fromDate: values.fromDate });
    }
    sendPage(res, 200, priorAuthorizationPage(session, values, { trackingNumber }));
  };

  const lookUp = (query: Record<string, string>): LookupResult => {
    const authorization = authorizations.find(
      (known) => known.memberId === query.memberId && known.reference === query.reference,
    );
    if (!authorization || (query.fromDate && query.fromDate !== authorization.fromDate)) return { status: 'not_found' };
    return { status: authorization.status, authorization, member: members.get(authorization.memberId) };
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://portal');
    const path = url.pathname;
    if (hangPaths.has(path)) return; // never answered; close() drops the connection
    const method = req.method ?? 'GET';
    if (OPERATOR_PATHS.get(path) === method) return operator.route(req, res, url);
    const endpoint = `${method} ${path}`;
    switch (endpoint) {
      case 'GET /assets/portal.css':
        res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/css; charset=utf-8' });
        return res.end(STYLESHEET);
      case 'GET /assets/portal.js':
        res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/javascript; charset=utf-8' });
        return res.end(SCRIPT);
      case 'GET /':
        return redirect(res, sessionOf(req)?.stage === 'signed-in' ? '/home' : '/login');
      case 'GET /login':
        if (hostile?.mode === 'redirect-login') return redirect(res, elsewhere('redirect-login', '/login')!, {}, 302);
        if (sessionOf(req)?.stage === 'signed-in') return redirect(res, '/home');
        return sendPage(res, 200, signInPage());
      case 'POST /login':
        if (hostile?.mode === 'redirect-post') {
          await readForm(req);
          // 307 keeps the method and the body: a browser that follows it posts the password there.
          return redirect(res, elsewhere('redirect-post', '/login')!, {}, 307);
        }
        return logIn(req, res);
      case 'GET /login/totp':
      case 'POST /login/totp': {
        const session = sessionOf(req);
        if (session?.stage !== 'totp') return redirect(res, '/login');
        return method === 'GET' ? sendPage(res, 200, codePage()) : verifyCode(req, res, session);
      }
      case 'POST /logout': {
        const session = signedIn(req, res);
        if (!session) return;
        await signedForm(req, session);
        sessions.delete(session.id);
        return redirect(res, '/login', { 'set-cookie': expiredCookie });
      }
    }
    const pages: Record<string, (session: Session) => Promise<void> | void> = {
      'GET /home': (session) => sendPage(res, 200, homePage(session)),
      'GET /prior-authorizations/new': (session) => sendPage(res, 200, priorAuthorizationPage(session)),
      'POST /prior-authorizations': (session) => submit(req, res, session),
      'GET /authorizations/status': (session) =>
        hostile?.mode === 'redirect-status'
          ? redirect(res, elsewhere('redirect-status', '/authorizations/status')!, {}, 302)
          : sendPage(res, 200, statusLookupPage(session)),
      'POST /authorizations/status': async (session) => {
        const query = await signedForm(req, session);
        if (seed.hangMemberId && query.memberId === seed.hangMemberId) return; // never answered
        sendPage(res, 200, statusLookupPage(session, query, lookUp(query)));
      },
    };
    const page = pages[endpoint];
    if (page) {
      const session = signedIn(req, res);
      if (session) await page(session);
      return;
    }
    const allow = ALLOWED.get(path);
    if (allow)
      return sendPage(res, 405, messagePage('error', 'Not allowed', 'This page does not take that method.'), { allow });
    sendPage(res, 404, messagePage('not-found', 'Not found', 'There is no such page.'));
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      if (error instanceof BadRequest) return sendPage(res, error.status, messagePage('error', 'Error', error.message));
      sendPage(res, 500, messagePage('error', 'Error', 'Something went wrong.'));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    get submissions() {
      return submissions;
    },
    unlock(username: string) {
      const state = users.get(username);
      if (state) Object.assign(state, { failures: 0, locked: false });
    },
    operatorToken,
    operatorUrl: `http://${host}:${address.port}/operator?token=${operatorToken}`,
    loginAttempts(username?: string) {
      if (username !== undefined) return attempts.get(username) ?? 0;
      return [...attempts.values()].reduce((sum, count) => sum + count, 0);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Hung requests and browsers' keep-alive connections would hold close() open forever.
        server.closeAllConnections();
      }),
  };
};
