import { html } from './html.ts';
import { layout } from './pages.ts';
import type { SandboxAuthorization, SandboxDecision, SandboxMember } from './seed.ts';

/**
 * The operator's page (operator.ts): every authorization the portal holds, a form to decide each pended
 * one, and a form to create a pended one. Ids and statuses only: no patient names. Every form carries
 * the operator's csrf token (a browser signs in with a cookie, which another local page could send).
 */
export const DECISIONS = ['approved', 'partially_approved', 'denied'] as const satisfies readonly SandboxDecision[];
export type Decision = (typeof DECISIONS)[number];

const DECISION_TEXT: Record<Decision, string> = {
  approved: 'Approved',
  partially_approved: 'Partially approved',
  denied: 'Denied',
};

export interface OperatorView {
  csrf: string;
  authorizations: readonly SandboxAuthorization[];
  members: readonly SandboxMember[];
  /** Prefilled in the forms: today's date, the usual first date of service. */
  today: string;
  fromDate: string;
}

const decideForm = (view: OperatorView, authorization: SandboxAuthorization) =>
  html`<form class="decide-form" method="post" action="/operator/decisions">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="memberId" value="${authorization.memberId}">
<input type="hidden" name="reference" value="${authorization.reference}">
<select name="status" aria-label="Decision">${DECISIONS.map((decision) => html`<option value="${decision}">${DECISION_TEXT[decision]}</option>`)}</select>
<input name="number" aria-label="Authorization number (approvals)" placeholder="SBX-AUTH-000201" pattern="[A-Za-z0-9-]{1,50}">
<input name="decisionDate" type="date" aria-label="Decision date" value="${view.today}" required>
<button type="submit">Decide</button>
</form>`;

const row = (view: OperatorView, authorization: SandboxAuthorization) =>
  html`<tr data-member-id="${authorization.memberId}" data-reference="${authorization.reference}" data-status="${authorization.status}">
<td>${authorization.memberId}</td><td>${authorization.reference}</td><td>${authorization.fromDate}</td>
<td class="status">${authorization.status}</td><td>${authorization.number ?? ''}</td><td>${authorization.decisionDate ?? ''}</td>
<td class="decide">${authorization.status === 'pended' ? decideForm(view, authorization) : ''}</td>
</tr>
`;

export const operatorPage = (view: OperatorView) =>
  layout(
    'operator',
    'Operator',
    html`<h1>Portal operator</h1>
<p>What the payer's staff would do: decide a pended authorization. The status lookup (and so the automation's next
status check) shows the decision at once. An approval needs an authorization number; every decision a date.</p>
<table id="operator-authorizations">
<thead><tr><th scope="col">Member ID</th><th scope="col">Reference</th><th scope="col">From date</th><th scope="col">Status</th><th scope="col">Authorization number</th><th scope="col">Decision date</th><th scope="col">Decide</th></tr></thead>
<tbody>
${view.authorizations.map((authorization) => row(view, authorization))}</tbody>
</table>
<h2>Create a pended authorization</h2>
<p>As if a provider had submitted it: the lookup then finds it as pended for this member and reference (the
request's externalId).</p>
<form id="create-form" method="post" action="/operator/authorizations">
<input type="hidden" name="csrf" value="${view.csrf}">
<label for="create-member-id">Member ID</label>
<select id="create-member-id" name="memberId">${view.members.map((member) => html`<option value="${member.memberId}">${member.memberId}</option>`)}</select>
<label for="create-reference">Provider reference</label>
<input id="create-reference" name="reference" maxlength="128" required>
<label for="create-from-date">Service from date</label>
<input id="create-from-date" name="fromDate" type="date" value="${view.fromDate}" required>
<button id="create-pended" type="submit">Create pended authorization</button>
</form>`,
  );

/** A refused operator action: its status, and a message naming what to fix. */
export const operatorErrorPage = (title: string, message: string) =>
  layout(
    'error',
    title,
    html`<h1>${title}</h1><p id="message" role="alert">${message}</p><p><a href="/operator">Operator page</a></p>`,
  );
