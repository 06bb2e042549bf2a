import type { IncomingMessage, ServerResponse } from 'node:http';
import { FORM_FIELD_NAMES, type LookupResult, priorAuthorizationPage, statusLookupPage } from './pages.ts';
import { type Portal, type Session, sendPage } from './portal-state.ts';
import { signedForm } from './sessions.ts';

/* What a signed-in user does: submit a prior-authorization form; look up an authorization's status. */

/** POST /prior-authorizations: a submission with a tracking number; a new reference is pended. */
export async function submit(portal: Portal, req: IncomingMessage, res: ServerResponse, session: Session) {
  const form = await signedForm(req, session);
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(form)) if (FORM_FIELD_NAMES.has(name)) values[name] = value;
  const memberId = values['patient.memberId'] ?? '';
  const reference = values.reference ?? '';
  if (!portal.members.has(memberId) || !reference || !values.fromDate) {
    const error = portal.members.has(memberId)
      ? 'Provider reference and from date are required.'
      : 'The member ID is not one of our members.';
    return sendPage(portal, res, 422, priorAuthorizationPage(session, values, { error }));
  }
  const trackingNumber = `SBX-PA-${String(portal.submissions.length + 1).padStart(6, '0')}`;
  portal.submissions.push({ trackingNumber, username: session.username, values });
  if (!portal.authorizations.some((known) => known.memberId === memberId && known.reference === reference)) {
    portal.authorizations.push({ memberId, reference, status: 'pended', fromDate: values.fromDate });
  }
  sendPage(portal, res, 200, priorAuthorizationPage(session, values, { trackingNumber }));
}

function lookUp(portal: Portal, query: Record<string, string>): LookupResult {
  const authorization = portal.authorizations.find(
    (known) => known.memberId === query.memberId && known.reference === query.reference,
  );
  if (!authorization || (query.fromDate && query.fromDate !== authorization.fromDate)) return { status: 'not_found' };
  return { status: authorization.status, authorization, member: portal.members.get(authorization.memberId) };
}

/** POST /authorizations/status; the seed's hang member is never answered (tests of timeouts). */
export async function statusLookup(portal: Portal, req: IncomingMessage, res: ServerResponse, session: Session) {
  const query = await signedForm(req, session);
  if (portal.seed.hangMemberId && query.memberId === portal.seed.hangMemberId) return; // never answered
  sendPage(portal, res, 200, statusLookupPage(session, query, lookUp(portal, query)));
}
