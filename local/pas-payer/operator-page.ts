import { html } from '../sandbox-portal/html.ts';
import type { StoredClaim } from './claims.ts';
import type { RegisteredClient } from './clients.ts';
import { OPERATOR_VERDICTS } from './decisions.ts';
import { DENIAL_REASONS } from './seed.ts';

/**
 * The payer operator's page (operator.ts): the pended claims, each with a form to decide it, the decided
 * ones and the registered clients. Ids, codes and statuses only: no patient names. Everything is escaped
 * (the sandbox portal's html template); no script, and a stylesheet of its own (the CSP allows no inline).
 */
const VERDICT_TEXT: Record<(typeof OPERATOR_VERDICTS)[number], string> = {
  approved: 'Approve every item',
  partially_approved: 'Partial: first item approved, the others denied',
  denied: 'Deny every item',
};

export const STYLESHEET = `body{font-family:system-ui,sans-serif;margin:2rem;color:#1b1f24}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #c8ced6;padding:.3rem .5rem;text-align:left;vertical-align:top}
form{display:flex;gap:.4rem;flex-wrap:wrap}.error{color:#a40e26}`;

export interface OperatorView {
  csrf: string;
  claims: readonly StoredClaim[];
  clients: readonly RegisteredClient[];
}

const identifiersOf = (claim: StoredClaim) => claim.claimIdentifiers.map((identifier) => identifier.value).join(', ');

const itemsOf = (claim: StoredClaim) =>
  (claim.claim.item ?? [])
    .map((item) => `${item.sequence}: ${item.productOrService?.coding?.[0]?.code ?? '?'} ×${item.quantity?.value ?? 1}`)
    .join('; ');

const decideForm = (csrf: string, claim: StoredClaim) =>
  html`<form class="decide-form" method="post" action="/operator/decisions">
<input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="claimId" value="${claim.id}">
<select name="status" aria-label="Decision">${OPERATOR_VERDICTS.map((verdict) => html`<option value="${verdict}">${VERDICT_TEXT[verdict]}</option>`)}</select>
<select name="reasonCode" aria-label="Reason (denied items)">${DENIAL_REASONS.map((reason) => html`<option value="${reason.code}">${reason.display}</option>`)}</select>
<input name="number" aria-label="Authorization number (optional)" placeholder="generated" pattern="[A-Za-z0-9-]{1,50}">
<button type="submit">Decide</button>
</form>`;

const pendedRow = (csrf: string, claim: StoredClaim) =>
  html`<tr data-claim-id="${claim.id}" data-member-id="${claim.memberId}" data-status="${claim.verdict}">
<td>${claim.memberId}</td><td class="identifier">${identifiersOf(claim)}</td><td>${itemsOf(claim)}</td><td>${claim.receivedAt}</td>
<td>${decideForm(csrf, claim)}</td></tr>
`;

const decidedRow = (claim: StoredClaim) =>
  html`<tr data-claim-id="${claim.id}" data-member-id="${claim.memberId}" data-status="${claim.verdict}">
<td>${claim.memberId}</td><td class="identifier">${identifiersOf(claim)}</td><td>${itemsOf(claim)}</td>
<td class="status">${claim.verdict}</td><td>${claim.preAuthRef ?? ''}</td><td>${claim.decidedAt}</td></tr>
`;

const layout = (title: string, body: ReturnType<typeof html>) => html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title} · Sandbox PAS payer</title><link rel="stylesheet" href="/assets/operator.css"></head>
<body data-page="pas-operator">
<main>
${body}
</main>
</body>
</html>
`;

export const operatorPage = (view: OperatorView) => {
  const pended = view.claims.filter((claim) => claim.verdict === 'pended');
  const decided = view.claims.filter((claim) => claim.verdict !== 'pended');
  return layout(
    'Operator',
    html`<h1>PAS payer operator</h1>
<p>What the payer's reviewers would do: decide a pended claim. The next <code>$inquire</code> reads the decision.</p>
<h2>Pended claims</h2>
<table id="pended-claims">
<thead><tr><th scope="col">Member ID</th><th scope="col">Claim identifier</th><th scope="col">Items</th><th scope="col">Received</th><th scope="col">Decide</th></tr></thead>
<tbody>
${pended.map((claim) => pendedRow(view.csrf, claim))}</tbody>
</table>
<h2>Decided claims</h2>
<table id="decided-claims">
<thead><tr><th scope="col">Member ID</th><th scope="col">Claim identifier</th><th scope="col">Items</th><th scope="col">Status</th><th scope="col">Authorization number</th><th scope="col">Decided</th></tr></thead>
<tbody>
${decided.map(decidedRow)}</tbody>
</table>
<h2>Registered clients</h2>
<table id="clients">
<thead><tr><th scope="col">Name</th><th scope="col">client_id</th><th scope="col">Answer shape</th><th scope="col">JWKS URL</th></tr></thead>
<tbody>
${view.clients.map((client) => html`<tr><td>${client.name}</td><td>${client.clientId}</td><td>${client.answerShape}</td><td>${client.jwksUri}</td></tr>\n`)}</tbody>
</table>`,
  );
};

export const errorPage = (message: string) =>
  layout(
    'Not done',
    html`<h1>Not done</h1><p id="message" class="error" role="alert">${message}</p><p><a href="/operator">Operator page</a></p>`,
  );
