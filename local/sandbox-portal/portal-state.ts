import type { ServerResponse } from 'node:http';
import type { Html } from './html.ts';
import type { sandboxOperator } from './operator.ts';
import { loginPage, type Signed, totpPage } from './pages.ts';
import type { SandboxAuthorization, SandboxMember, SandboxSeed, SandboxUser } from './seed.ts';

/* The sandbox portal's state in memory, and the ways it answers: a page, a redirect. */

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

export interface UserState {
  user: SandboxUser;
  failures: number;
  locked: boolean;
}

export interface Session extends Signed {
  id: string;
  stage: 'totp' | 'signed-in';
  expiresAt: number;
}

export interface Portal {
  seed: SandboxSeed;
  hangPaths: Set<string>;
  hostile: { mode: HostileMode; origin: string } | undefined;
  /** The headers of every answer. */
  securityHeaders: Record<string, string>;
  users: Map<string, UserState>;
  members: Map<string, SandboxMember>;
  authorizations: SandboxAuthorization[];
  submissions: Submission[];
  sessions: Map<string, Session>;
  /** Sign-in attempts by username. */
  attempts: Map<string, number>;
  operator: ReturnType<typeof sandboxOperator>;
}

/** The headers of every answer; a hostile portal's CSP also lets frames and forms reach `elsewhere`. */
export const securityHeaders = (elsewhere?: string) => ({
  'content-security-policy': elsewhere
    ? `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; frame-src ${elsewhere}; form-action 'self' ${elsewhere}; frame-ancestors 'none'; base-uri 'none'`
    : "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Pages carry PHI: nothing is kept by caches.
  'cache-control': 'no-store',
});

/** Where a hostile portal of `mode` leads instead of `path`; undefined for any other portal. */
export function elsewhere(portal: Portal, mode: HostileMode, path: string): string | undefined {
  return portal.hostile?.mode === mode ? new URL(path, portal.hostile.origin).href : undefined;
}

export function sendPage(
  portal: Portal,
  res: ServerResponse,
  status: number,
  page: Html,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, { ...portal.securityHeaders, 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(page.value);
}

export function redirect(
  portal: Portal,
  res: ServerResponse,
  location: string,
  headers: Record<string, string | string[]> = {},
  status = 303,
): void {
  res.writeHead(status, { ...portal.securityHeaders, location, ...headers });
  res.end();
}

/** The verification-code page as this portal renders it (a hostile one posts elsewhere). */
export function codePage(portal: Portal, options: Parameters<typeof totpPage>[0] = {}): Html {
  const action = elsewhere(portal, 'post-totp', '/login/totp');
  return totpPage({ ...options, ...(action ? { action } : {}) });
}

/** The sign-in page as this portal renders it (a hostile one adds a frame, or posts elsewhere). */
export function signInPage(portal: Portal, options: Parameters<typeof loginPage>[0] = {}): Html {
  const frame = elsewhere(portal, 'frame-login', '/frame');
  const action = elsewhere(portal, 'post-login', '/login');
  return loginPage({ ...options, ...(frame ? { frame } : {}), ...(action ? { action } : {}) });
}
