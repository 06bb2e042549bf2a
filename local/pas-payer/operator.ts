import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequest, cookieOf, readForm } from '../sandbox-portal/forms.ts';
import type { Html } from '../sandbox-portal/html.ts';
import type { ClaimStore } from './claims.ts';
import { type ClientRegistry, RegistrationRefused } from './clients.ts';
import { OPERATOR_VERDICTS } from './decisions.ts';
import { BASE_HEADERS, mediaTypeOf, parseJson, Refusal, readBody, sendJson } from './http.ts';
import { errorPage, operatorPage } from './operator-page.ts';
import { DENIAL_REASONS } from './seed.ts';
import { notifyClaimChanged } from './subscription-hub.ts';

/*
 * The payer's operator, as the sandbox portal's (docs/sandbox-portal.md, "The operator"): a token of its own,
 * new at every start, never a client's. Scripts send `Authorization: Bearer <token>` (JSON or forms); a
 * browser opens `/operator?token=<token>` once for an HttpOnly, SameSite=Strict cookie, and its forms carry
 * a csrf token. It registers clients (POST /register, scripts only) and decides pended claims.
 */
export const OPERATOR_PATHS = new Map([
  ['/operator', 'GET'],
  ['/operator/decisions', 'POST'],
  ['/register', 'POST'],
]);

const COOKIE = 'pas_operator';
const AUTHORIZATION_NUMBER = /^[A-Za-z0-9-]{1,50}$/;
const MAX_JSON_BYTES = 64 * 1024;
const CHALLENGE = { 'www-authenticate': 'Bearer realm="pas-operator"' };
const CSP = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface OperatorState {
  token: string;
  csrf: string;
  clients: ClientRegistry;
  claims: ClaimStore;
}

const digest = (text: string) => createHash('sha256').update(text).digest();
const sameToken = (given: string, expected: string) => timingSafeEqual(digest(given), digest(expected));

const sendPage = (res: ServerResponse, status: number, page: Html, headers: Record<string, string> = {}) => {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-security-policy': CSP,
    'content-type': 'text/html; charset=utf-8',
    ...headers,
  });
  res.end(page.value);
};

const redirect = (res: ServerResponse, location: string, headers: Record<string, string> = {}) => {
  res.writeHead(303, { ...BASE_HEADERS, 'content-security-policy': CSP, location, ...headers });
  res.end();
};

/** A refusal in the caller's terms: JSON for a script that sent JSON, an error page for a browser's form. */
const refuse = (status: number, error: string, message: string, json: boolean) =>
  json ? new Refusal(status, { error, message }, status === 401 ? CHALLENGE : {}) : new BadRequest(status, message);

/** How the caller proved to be the operator, or a 401: the bearer header wins over the cookie. */
function credentialOf(state: OperatorState, req: IncomingMessage, json: boolean): 'bearer' | 'cookie' {
  const header = /^Bearer ([^\s]+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (header !== undefined) {
    if (sameToken(header, state.token)) return 'bearer';
  } else if (!json) {
    const cookie = cookieOf(req, COOKIE);
    if (cookie && sameToken(cookie, state.token)) return 'cookie';
  }
  throw refuse(
    401,
    'unauthorized',
    'Open the operator link the payer printed at start, or send Authorization: Bearer <token>.',
    json,
  );
}

/** A JSON body of at most 64 KiB, an object. */
async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const tooLarge = () => refuse(413, 'invalid_request', 'The body is too large.', true) as Refusal;
  const body = parseJson(
    await readBody(req, MAX_JSON_BYTES, tooLarge),
    (message) => refuse(400, 'invalid_request', message, true) as Refusal,
  );
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw refuse(400, 'invalid_request', 'The body is a JSON object.', true);
  }
  return body as Record<string, unknown>;
}

/** POST /register: `{jwks_uri, client_name, answer_shape?}` → 201 `{client_id, …}` (RFC 7591's names). */
async function register(state: OperatorState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  credentialOf(state, req, true);
  if (mediaTypeOf(req) !== 'application/json') throw refuse(415, 'invalid_request', 'Send JSON.', true);
  const body = await jsonBody(req);
  try {
    const client = state.clients.register({
      jwksUri: body.jwks_uri as string,
      name: body.client_name as string,
      ...(body.answer_shape === undefined ? {} : { answerShape: body.answer_shape as 'bundle' }),
    });
    const { clientId, name, jwksUri, answerShape } = client;
    sendJson(res, 201, { client_id: clientId, client_name: name, jwks_uri: jwksUri, answer_shape: answerShape });
  } catch (error) {
    if (error instanceof RegistrationRefused) throw refuse(400, 'invalid_client_metadata', error.message, true);
    throw error;
  }
}

/** The decision a form or JSON asks for, checked; its claim must be pended. */
function decisionOf(state: OperatorState, fields: Record<string, unknown>, json: boolean) {
  const field = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string).trim() : '');
  const status = field('status');
  const verdict = OPERATOR_VERDICTS.find((known) => known === status);
  if (!verdict) throw refuse(400, 'invalid_request', `status must be one of ${OPERATOR_VERDICTS.join(', ')}.`, json);
  const reason = DENIAL_REASONS.find((known) => known.code === (field('reasonCode') || DENIAL_REASONS[0].code));
  if (!reason) throw refuse(400, 'invalid_request', 'reasonCode is not one of the payer’s reasons.', json);
  const number = field('number');
  if (number && !AUTHORIZATION_NUMBER.test(number)) {
    throw refuse(400, 'invalid_request', 'number must be 1 to 50 letters, digits or hyphens.', json);
  }
  const claim = state.claims.byId(field('claimId'));
  if (!claim) throw refuse(404, 'not_found', 'No claim has this id.', json);
  if (claim.verdict !== 'pended') throw refuse(409, 'conflict', `This claim is ${claim.verdict} already.`, json);
  return { claim, verdict, reason, number: number || undefined };
}

/** POST /operator/decisions: a form (303 to the page) or JSON (200 with the claim's new state). */
async function decide(state: OperatorState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const json = mediaTypeOf(req) === 'application/json';
  const by = credentialOf(state, req, json);
  const fields = json ? await jsonBody(req) : await readForm(req);
  if (by === 'cookie' && !sameToken(String(fields.csrf ?? ''), state.csrf)) {
    throw new BadRequest(403, 'The form has expired. Open the operator page again.');
  }
  const { claim, verdict, reason, number } = decisionOf(state, fields, json);
  state.claims.decide(claim, verdict, reason, number);
  notifyClaimChanged(state.claims, claim);
  if (!json) return redirect(res, '/operator');
  sendJson(res, 200, { claimId: claim.id, status: claim.verdict, preAuthRef: claim.preAuthRef ?? null });
}

/** GET /operator: the page; with the link's `token`, its exchange for the cookie. */
function show(state: OperatorState, req: IncomingMessage, res: ServerResponse, link: string | null): void {
  if (link !== null) {
    if (!sameToken(link, state.token))
      throw new BadRequest(401, 'This operator link is not valid (the payer restarted?).');
    // The link's token becomes the cookie, and the address bar loses it.
    redirect(res, '/operator', { 'set-cookie': `${COOKIE}=${link}; Path=/operator; HttpOnly; SameSite=Strict` });
    return;
  }
  credentialOf(state, req, false);
  sendPage(res, 200, operatorPage({ csrf: state.csrf, claims: state.claims.all(), clients: state.clients.all() }));
}

/** Answers a request for one of OPERATOR_PATHS with its method. */
export async function routeOperator(
  state: OperatorState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  url: URL,
) {
  try {
    if (path === '/operator') return show(state, req, res, url.searchParams.get('token'));
    if (path === '/operator/decisions') return await decide(state, req, res);
    return await register(state, req, res);
  } catch (error) {
    if (error instanceof Refusal) return sendJson(res, error.status, error.body, error.headers);
    if (!(error instanceof BadRequest)) throw error;
    sendPage(res, error.status, errorPage(error.message), error.status === 401 ? CHALLENGE : {});
  }
}
