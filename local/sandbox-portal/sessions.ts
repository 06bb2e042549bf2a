import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequest, cookieOf, readForm } from './forms.ts';
import { type Portal, redirect, type Session } from './portal-state.ts';

/* Sessions: an HttpOnly, SameSite=Strict cookie, idle for at most 30 minutes, and a CSRF token per session. */

const SESSION_IDLE_MS = 30 * 60 * 1000;
const COOKIE = 'sandbox_session';

export const sessionCookie = (id: string) => `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict`;
export const expiredCookie = `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;

export function sessionOf(portal: Portal, req: IncomingMessage): Session | undefined {
  const id = cookieOf(req, COOKIE);
  const session = id ? portal.sessions.get(id) : undefined;
  if (!session) return undefined;
  if (session.expiresAt < Date.now()) {
    portal.sessions.delete(session.id);
    return undefined;
  }
  session.expiresAt = Date.now() + SESSION_IDLE_MS;
  return session;
}

export function startSession(portal: Portal, username: string, stage: Session['stage']): Session {
  const session: Session = {
    id: randomBytes(32).toString('base64url'),
    username,
    stage,
    csrf: randomBytes(24).toString('base64url'),
    expiresAt: Date.now() + SESSION_IDLE_MS,
  };
  portal.sessions.set(session.id, session);
  return session;
}

/** The signed-in session, or a redirect to the sign-in page (undefined then). */
export function signedIn(portal: Portal, req: IncomingMessage, res: ServerResponse): Session | undefined {
  const session = sessionOf(portal, req);
  if (session?.stage === 'signed-in') return session;
  redirect(portal, res, '/login');
  return undefined;
}

/** The form, once its CSRF token is the session's. */
export async function signedForm(req: IncomingMessage, session: Session): Promise<Record<string, string>> {
  const form = await readForm(req);
  const given = Buffer.from(form.csrf ?? '');
  const expected = Buffer.from(session.csrf);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new BadRequest(403, 'The form has expired. Open the page again.');
  }
  return form;
}
