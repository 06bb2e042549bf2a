import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequest, cookieOf, readForm } from './forms.ts';
import type { Html } from './html.ts';
import { DECISIONS, type Decision, operatorErrorPage, operatorPage } from './operator-pages.ts';
import type { SandboxAuthorization, SandboxMember } from './seed.ts';

/*
 * The sandbox's operator: what the payer's staff do to an authorization after a provider submitted it
 * (docs/sandbox-portal.md, "The operator"). Decides a pended authorization (approved, partially approved
 * or denied, with a number for an approval and a date), or creates a pended one. Not a portal user's page: it takes the
 * operator token the portal prints at start, never a user's session, so the automation (which signs in
 * as a user) cannot decide its own lookups, and it works however the portal is bound (HOST).
 *   - scripts: `Authorization: Bearer <token>` on every call;
 *   - a browser: `/operator?token=<token>` once, exchanged for an HttpOnly, SameSite=Strict cookie
 *     (303 to /operator, as the scraper session does); forms then carry a csrf token, because another
 *     page on this machine is same-site to a loopback portal whatever its port.
 */
export const OPERATOR_PATHS = new Map([
  ['/operator', 'GET'],
  ['/operator/decisions', 'POST'],
  ['/operator/authorizations', 'POST'],
]);

const COOKIE = 'sandbox_operator';
/** What a payer's authorization number looks like, and all the automation accepts (docs/rpa.md, "Data"). */
const AUTHORIZATION_NUMBER = /^[A-Za-z0-9-]{1,50}$/;
const MAX_REFERENCE = 128;

export interface OperatorDependencies {
  token: string;
  csrf: string;
  /** The portal's own state: what its status lookup reads. */
  authorizations: SandboxAuthorization[];
  members: ReadonlyMap<string, SandboxMember>;
  /** The first date of service the create form suggests. */
  fromDate: string;
  send: (res: ServerResponse, status: number, page: Html, headers?: Record<string, string>) => void;
  redirect: (res: ServerResponse, location: string, headers?: Record<string, string>) => void;
  now?: () => Date;
}

const digest = (text: string) => createHash('sha256').update(text).digest();
const sameToken = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected));

/** YYYY-MM-DD naming a day of the calendar (no 2026-02-30). */
const isIsoDate = (text: string) => {
  const parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!parts) return false;
  const [year, month, day] = parts.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
};

const field = (form: Record<string, string>, name: string) => (form[name] ?? '').trim();

/** The decision a form asks for, or a 400 naming the field. */
const decisionOf = (form: Record<string, string>) => {
  const status = field(form, 'status');
  if (!(DECISIONS as readonly string[]).includes(status)) {
    throw new BadRequest(400, `status must be one of ${DECISIONS.join(', ')}.`);
  }
  const number = field(form, 'number');
  const decisionDate = field(form, 'decisionDate');
  if (status === 'denied' && number) throw new BadRequest(400, 'A denial has no authorization number: leave it empty.');
  if (status !== 'denied' && !AUTHORIZATION_NUMBER.test(number)) {
    throw new BadRequest(400, 'An approval needs an authorization number: 1 to 50 letters, digits or hyphens.');
  }
  if (!isIsoDate(decisionDate)) throw new BadRequest(400, 'decisionDate must be a date of the form YYYY-MM-DD.');
  return { status: status as Decision, ...(number ? { number } : {}), decisionDate };
};

/** The member and reference a form names (both required), each at most 128 characters. */
const referenceOf = (form: Record<string, string>) => {
  const memberId = field(form, 'memberId');
  const reference = field(form, 'reference');
  if (!memberId || !reference) throw new BadRequest(400, 'memberId and reference are required.');
  if (reference.length > MAX_REFERENCE) {
    throw new BadRequest(400, `reference must be at most ${MAX_REFERENCE} characters.`);
  }
  return { memberId, reference };
};

/** The operator's requests, answered over the portal's own state (`deps`). */
export const sandboxOperator = (deps: OperatorDependencies) => ({
  route: (req: IncomingMessage, res: ServerResponse, url: URL) => routeOperatorRequest(deps, req, res, url),
});

/** Answers a request for one of OPERATOR_PATHS with the right method; refusals as an error page. */
async function routeOperatorRequest(
  deps: OperatorDependencies,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  try {
    const endpoint = `${req.method} ${url.pathname}`;
    if (endpoint === 'GET /operator') return show(deps, req, res, url.searchParams.get('token'));
    if (endpoint === 'POST /operator/decisions') return await decide(deps, req, res);
    if (endpoint === 'POST /operator/authorizations') return await create(deps, req, res);
  } catch (error) {
    if (!(error instanceof BadRequest)) throw error;
    const headers: Record<string, string> =
      error.status === 401 ? { 'www-authenticate': 'Bearer realm="sandbox-operator"' } : {};
    deps.send(res, error.status, operatorErrorPage('Not done', error.message), headers);
  }
}

/** How the caller proved to be the operator, or a 401: the bearer header wins over the cookie. */
function credentialOf(deps: OperatorDependencies, req: IncomingMessage): 'bearer' | 'cookie' {
  const header = /^Bearer ([^\s]+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (header !== undefined) {
    if (sameToken(header, deps.token)) return 'bearer';
  } else {
    const cookie = cookieOf(req, COOKIE);
    if (cookie && sameToken(cookie, deps.token)) return 'cookie';
  }
  throw new BadRequest(
    401,
    'Open the operator link the portal printed at start, or send Authorization: Bearer <token>.',
  );
}

/** A form from the operator: a browser's (by cookie) must carry the page's csrf token. */
async function operatorForm(deps: OperatorDependencies, req: IncomingMessage): Promise<Record<string, string>> {
  const by = credentialOf(deps, req);
  const form = await readForm(req);
  if (by === 'cookie' && !sameToken(form.csrf ?? '', deps.csrf)) {
    throw new BadRequest(403, 'The form has expired. Open the operator page again.');
  }
  return form;
}

const findAuthorization = (
  { authorizations }: OperatorDependencies,
  { memberId, reference }: { memberId: string; reference: string },
) => authorizations.find((known) => known.memberId === memberId && known.reference === reference);

/** POST /operator/decisions: decides a pended authorization. */
async function decide(deps: OperatorDependencies, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await operatorForm(deps, req);
  const decision = decisionOf(form);
  const authorization = findAuthorization(deps, referenceOf(form));
  if (!authorization) throw new BadRequest(404, 'No authorization has this member ID and reference.');
  if (authorization.status !== 'pended') {
    throw new BadRequest(409, `This authorization is ${authorization.status} already: only a pended one is decided.`);
  }
  Object.assign(authorization, decision);
  deps.redirect(res, '/operator');
}

/** POST /operator/authorizations: creates a pended authorization for one of the portal's members. */
async function create(deps: OperatorDependencies, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await operatorForm(deps, req);
  const wanted = referenceOf(form);
  const fromDate = field(form, 'fromDate');
  if (!deps.members.has(wanted.memberId)) throw new BadRequest(400, 'memberId is not one of the portal’s members.');
  if (!isIsoDate(fromDate)) throw new BadRequest(400, 'fromDate must be a date of the form YYYY-MM-DD.');
  if (findAuthorization(deps, wanted)) {
    throw new BadRequest(409, 'An authorization with this member ID and reference exists already.');
  }
  deps.authorizations.push({ ...wanted, status: 'pended', fromDate });
  deps.redirect(res, '/operator');
}

/** GET /operator: the page; with the link's `token`, its exchange for the cookie. */
function show(deps: OperatorDependencies, req: IncomingMessage, res: ServerResponse, link: string | null): void {
  if (link !== null) {
    // The link's token becomes the cookie, and the address bar loses it.
    if (!sameToken(link, deps.token))
      throw new BadRequest(401, 'This operator link is not valid (the portal restarted?).');
    const cookie = `${COOKIE}=${link}; Path=/operator; HttpOnly; SameSite=Strict`;
    deps.redirect(res, '/operator', { 'set-cookie': cookie });
    return;
  }
  credentialOf(deps, req);
  const now = deps.now ?? (() => new Date());
  const view = {
    csrf: deps.csrf,
    authorizations: deps.authorizations,
    members: [...deps.members.values()],
    today: now().toISOString().slice(0, 10),
    fromDate: deps.fromDate,
  };
  deps.send(res, 200, operatorPage(view));
}
