import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Secret, TOTP } from 'otpauth';
import { readForm } from './forms.ts';
import { lockedPage } from './pages.ts';
import { codePage, type Portal, redirect, type Session, sendPage, signInPage, type UserState } from './portal-state.ts';
import { expiredCookie, sessionCookie, startSession } from './sessions.ts';

/* Signing in: a password, then a verification code for users with a TOTP secret; three failures lock. */

const MAX_FAILED_LOGINS = 3;

const digest = (text: string) => createHash('sha256').update(text).digest();
/** Compares digests so the time taken says nothing about how much of the password matched. */
const samePassword = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected));

const codeIsValid = (secret: string, code: string) =>
  /^[0-9]{6}$/.test(code) &&
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).validate({
    token: code,
    window: 1,
  }) !== null;

/** Counts a failed sign-in (a wrong password or a wrong code); the third in a row locks the account. */
function failedAttempt(state: UserState): boolean {
  state.failures += 1;
  if (state.failures >= MAX_FAILED_LOGINS) state.locked = true;
  return state.locked;
}

/** POST /login. */
export async function logIn(portal: Portal, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await readForm(req);
  const username = form.username ?? '';
  portal.attempts.set(username, (portal.attempts.get(username) ?? 0) + 1);
  const state = portal.users.get(username);
  if (state?.locked) return sendPage(portal, res, 423, lockedPage());
  // An unknown username gets the same answer as a wrong password: the portal does not say which users exist.
  if (!state || !samePassword(form.password ?? '', state.user.password)) {
    if (state && failedAttempt(state)) return sendPage(portal, res, 423, lockedPage());
    return sendPage(portal, res, 401, signInPage(portal, { username, error: 'wrong_password' }));
  }
  if (state.user.totpSecret) {
    const session = startSession(portal, username, 'totp');
    return redirect(portal, res, '/login/totp', { 'set-cookie': sessionCookie(session.id) });
  }
  state.failures = 0;
  redirect(portal, res, '/home', { 'set-cookie': sessionCookie(startSession(portal, username, 'signed-in').id) });
}

/** POST /login/totp, in a half-signed-in session. */
export async function verifyCode(
  portal: Portal,
  req: IncomingMessage,
  res: ServerResponse,
  session: Session,
): Promise<void> {
  const form = await readForm(req);
  const state = portal.users.get(session.username)!;
  if (state.locked) {
    portal.sessions.delete(session.id);
    return sendPage(portal, res, 423, lockedPage(), { 'set-cookie': expiredCookie });
  }
  if (!codeIsValid(state.user.totpSecret ?? '', (form.code ?? '').trim())) {
    if (failedAttempt(state)) {
      portal.sessions.delete(session.id);
      return sendPage(portal, res, 423, lockedPage(), { 'set-cookie': expiredCookie });
    }
    return sendPage(portal, res, 401, codePage(portal, { error: 'wrong_code' }));
  }
  state.failures = 0;
  // A new session id once fully signed in, so the half-signed-in cookie is worth nothing.
  portal.sessions.delete(session.id);
  const signedIn = startSession(portal, session.username, 'signed-in');
  redirect(portal, res, '/home', { 'set-cookie': sessionCookie(signedIn.id) });
}
