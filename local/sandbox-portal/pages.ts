import { type Code, readCodeSet } from '#lib/validation/code-sets';
import { type Html, html } from './html.ts';
import type { SandboxAuthorization, SandboxDecision, SandboxMember } from './seed.ts';

/**
 * The portal's pages, server-rendered like a payer portal's: stable ids, names and labels a
 * driver can target, `data-page` on <body> naming the page, and `data-error` on the message a
 * failed sign-in shows. Scripts and styles come from /assets (the CSP allows nothing inline).
 */
export type PageName =
  | 'login'
  | 'totp'
  | 'locked'
  | 'home'
  | 'prior-authorization'
  | 'status-lookup'
  | 'operator'
  | 'not-found'
  | 'error';

export const layout = (
  page: PageName,
  title: string,
  body: Html,
  signedIn?: { username: string; csrf: string },
) => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title} · Sandbox payer portal</title>
<link rel="stylesheet" href="/assets/portal.css">
<script src="/assets/portal.js" defer></script>
</head>
<body data-page="${page}">
<header>
<a class="brand" href="/">Sandbox payer portal</a>
${
  signedIn
    ? html`<nav><span id="signed-in-as">Signed in as ${signedIn.username}</span>
<form id="sign-out-form" method="post" action="/logout"><input type="hidden" name="csrf" value="${signedIn.csrf}"><button id="sign-out" type="submit">Sign out</button></form></nav>`
    : ''
}
</header>
<main>
${body}
</main>
</body>
</html>
`;

/** What a hostile portal puts on its sign-in pages (server.ts, `hostile`): another form action, a frame. */
export interface Hostile {
  action?: string;
  frame?: string;
}

export const loginPage = (options: { username?: string; error?: 'wrong_password' } & Hostile = {}) =>
  layout(
    'login',
    'Sign in',
    html`<h1>Provider sign in</h1>
${options.error ? html`<p id="login-error" class="error" role="alert" data-error="wrong_password">The username or password is incorrect.</p>` : ''}
${options.frame ? html`<iframe id="login-frame" title="News" src="${options.frame}"></iframe>` : ''}
<form id="login-form" method="post" action="${options.action ?? '/login'}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" value="${options.username ?? ''}" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button id="sign-in" type="submit">Sign in</button>
</form>`,
  );

export const totpPage = (options: { error?: 'wrong_code' } & Pick<Hostile, 'action'> = {}) =>
  layout(
    'totp',
    'Verification code',
    html`<h1>Two-step verification</h1>
<p>Enter the 6-digit code from your authenticator app.</p>
${options.error ? html`<p id="totp-error" class="error" role="alert" data-error="wrong_code">The code is incorrect or has expired.</p>` : ''}
<form id="totp-form" method="post" action="${options.action ?? '/login/totp'}">
<label for="totp-code">Verification code</label>
<input id="totp-code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button id="verify" type="submit">Verify</button>
</form>`,
  );

export const lockedPage = () =>
  layout(
    'locked',
    'Account locked',
    html`<h1>Account locked</h1>
<p id="account-locked" class="error" role="alert" data-error="account_locked">This account is locked after 3 failed sign-in attempts. Call provider services to unlock it.</p>
<p><a href="/login">Back to sign in</a></p>`,
  );

export interface Signed {
  username: string;
  csrf: string;
}

export const homePage = (session: Signed) =>
  layout(
    'home',
    'Home',
    html`<h1>Welcome</h1>
<ul class="tasks">
<li><a id="prior-authorization-link" href="/prior-authorizations/new">Submit a prior authorization</a></li>
<li><a id="status-lookup-link" href="/authorizations/status">Check an authorization status</a></li>
</ul>`,
    session,
  );

/** One field of the prior-authorization form. `{i}` in a row field's name is the row's index. */
interface Field {
  name: string;
  label: string;
  kind: 'text' | 'date' | 'select';
  options?: Code[];
}

const DIAGNOSIS_QUALIFIERS: Code[] = [
  { code: 'ABK', description: 'Principal diagnosis' },
  { code: 'ABF', description: 'Other diagnosis' },
  { code: 'ABJ', description: 'Admitting diagnosis' },
  { code: 'APR', description: 'Reason for visit' },
];

const providerFields = (prefix: string, labelPrefix: string): Field[] => [
  { name: `${prefix}.npi`, label: `${labelPrefix} NPI`, kind: 'text' },
  { name: `${prefix}.firstName`, label: `${labelPrefix} first name`, kind: 'text' },
  { name: `${prefix}.lastName`, label: `${labelPrefix} last name`, kind: 'text' },
  { name: `${prefix}.organizationName`, label: `${labelPrefix} organization`, kind: 'text' },
  { name: `${prefix}.roleCode`, label: `${labelPrefix} role`, kind: 'select', options: readCodeSet('provider-role') },
];

const SECTIONS: { title: string; fields: Field[] }[] = [
  { title: 'Request', fields: [{ name: 'reference', label: 'Provider reference', kind: 'text' }] },
  {
    title: 'Patient',
    fields: [
      { name: 'patient.memberId', label: 'Member ID', kind: 'text' },
      { name: 'patient.firstName', label: 'Patient first name', kind: 'text' },
      { name: 'patient.lastName', label: 'Patient last name', kind: 'text' },
      { name: 'patient.birthDate', label: 'Patient birth date', kind: 'date' },
      { name: 'patient.payerId', label: 'Payer ID', kind: 'text' },
    ],
  },
  { title: 'Requesting provider', fields: providerFields('requestingProvider', 'Requesting provider') },
  {
    title: 'Service',
    fields: [
      { name: 'serviceTypeCode', label: 'Service type', kind: 'select', options: readCodeSet('service-type') },
      {
        name: 'placeOfServiceCode',
        label: 'Place of service',
        kind: 'select',
        options: readCodeSet('place-of-service'),
      },
      { name: 'admissionTypeCode', label: 'Admission type', kind: 'select', options: readCodeSet('admission-type') },
      { name: 'fromDate', label: 'From date', kind: 'date' },
      { name: 'toDate', label: 'To date', kind: 'date' },
    ],
  },
];

export type RowGroup = 'renderingProviders' | 'diagnoses' | 'procedures';

interface RowGroupOf {
  group: RowGroup;
  title: string;
  singular: string;
  max: number;
  fields: Field[];
}

/** Repeatable rows: `Add …` buttons clone the row template (assets/portal.js); posted rows come back as rows. */
const ROW_GROUPS: RowGroupOf[] = [
  {
    group: 'renderingProviders',
    title: 'Rendering providers',
    singular: 'rendering provider',
    max: 20,
    fields: providerFields('renderingProviders.{i}', 'Rendering provider {n}'),
  },
  {
    group: 'diagnoses',
    title: 'Diagnoses',
    singular: 'diagnosis',
    max: 12,
    fields: [
      {
        name: 'diagnoses.{i}.qualifierCode',
        label: 'Diagnosis {n} qualifier',
        kind: 'select',
        options: DIAGNOSIS_QUALIFIERS,
      },
      { name: 'diagnoses.{i}.code', label: 'Diagnosis {n} ICD-10 code', kind: 'text' },
    ],
  },
  {
    group: 'procedures',
    title: 'Procedures',
    singular: 'procedure',
    max: 20,
    fields: [
      { name: 'procedures.{i}.qualifierCode', label: 'Procedure {n} qualifier', kind: 'text' },
      { name: 'procedures.{i}.code', label: 'Procedure {n} code', kind: 'text' },
      { name: 'procedures.{i}.quantity', label: 'Procedure {n} quantity', kind: 'text' },
    ],
  },
];

/** Every name the form accepts, for reading a post: fixed fields, then row fields up to each group's max. */
export const FORM_FIELD_NAMES: ReadonlySet<string> = new Set([
  ...SECTIONS.flatMap((section) => section.fields.map((field) => field.name)),
  ...ROW_GROUPS.flatMap((group) =>
    Array.from({ length: group.max }, (_, index) =>
      group.fields.map((field) => field.name.replace('{i}', String(index))),
    ).flat(),
  ),
]);

const idOf = (name: string) => `field-${name.replaceAll('.', '-')}`;

const renderField = (field: Field, value: string) => {
  const id = idOf(field.name);
  const label = html`<label for="${id}">${field.label}</label>`;
  if (field.kind === 'select') {
    return html`<div class="field">${label}<select id="${id}" name="${field.name}">
<option value="">Select…</option>
${(field.options ?? []).map(
  (option) =>
    html`<option value="${option.code}"${option.code === value ? html` selected` : ''}>${option.code} – ${option.description}</option>`,
)}
</select></div>
`;
  }
  return html`<div class="field">${label}<input id="${id}" name="${field.name}" type="${field.kind}" value="${value}"></div>
`;
};

const rowField = (field: Field, index: string, number: string): Field => ({
  ...field,
  name: field.name.replace('{i}', index),
  label: field.label.replace('{n}', number),
});

const renderRow = (group: RowGroupOf, index: number, values: Record<string, string>) =>
  html`<fieldset class="row" data-row="${index}">
${group.fields.map((field) => {
  const named = rowField(field, String(index), String(index + 1));
  return renderField(named, values[named.name] ?? '');
})}
</fieldset>
`;

/** The row template: __INDEX__ and __NUMBER__ are replaced by the script when it adds a row. */
const rowTemplate = (group: RowGroupOf) =>
  html`<template id="${group.group}-row"><fieldset class="row" data-row="__INDEX__">
${group.fields.map((field) => renderField(rowField(field, '__INDEX__', '__NUMBER__'), ''))}
</fieldset></template>`;

const rowCountOf = (group: RowGroup, values: Record<string, string>) => {
  const prefix = `${group}.`;
  let count = 1;
  for (const name of Object.keys(values)) {
    if (!name.startsWith(prefix) || values[name] === '') continue;
    const index = Number(name.slice(prefix.length).split('.')[0]);
    if (Number.isInteger(index)) count = Math.max(count, index + 1);
  }
  return count;
};

export const priorAuthorizationPage = (
  session: Signed,
  values: Record<string, string> = {},
  outcome?: { trackingNumber: string } | { error: string },
) =>
  layout(
    'prior-authorization',
    'Prior authorization',
    html`<h1>Prior authorization request</h1>
${outcome && 'trackingNumber' in outcome ? html`<p id="submission-confirmation" class="notice" role="status">Submitted. Tracking number <strong id="tracking-number">${outcome.trackingNumber}</strong>.</p>` : ''}
${outcome && 'error' in outcome ? html`<p id="form-error" class="error" role="alert">${outcome.error}</p>` : ''}
<form id="prior-authorization-form" method="post" action="/prior-authorizations">
<input type="hidden" name="csrf" value="${session.csrf}">
${SECTIONS.map(
  (section) => html`<section><h2>${section.title}</h2>
${section.fields.map((field) => renderField(field, values[field.name] ?? ''))}</section>
`,
)}
${ROW_GROUPS.map(
  (group) => html`<section><h2>${group.title}</h2>
<div id="${group.group}-rows" class="rows">
${Array.from({ length: rowCountOf(group.group, values) }, (_, index) => renderRow(group, index, values))}
</div>
${rowTemplate(group)}
<button id="add-${group.group}" type="button" data-add-row="${group.group}" data-max="${group.max}">Add ${group.singular}</button>
</section>
`,
)}
<button id="submit-prior-authorization" type="submit">Submit request</button>
</form>`,
    session,
  );

export type LookupResult =
  | { status: 'not_found' }
  | {
      status: SandboxDecision;
      authorization: SandboxAuthorization;
      member: SandboxMember | undefined;
    };

const STATUS_TEXT: Record<SandboxDecision, string> = {
  approved: 'Approved',
  partially_approved: 'Partially approved',
  denied: 'Denied',
  pended: 'Pended (in review)',
};

const renderResult = (result: LookupResult) => {
  if (result.status === 'not_found') {
    return html`<section id="status-result" data-status="not_found"><p>No authorization matches this member and reference.</p></section>`;
  }
  const { authorization, member } = result;
  return html`<section id="status-result" data-status="${result.status}">
<dl>
<dt>Status</dt><dd id="status-value">${STATUS_TEXT[result.status]}</dd>
${member ? html`<dt>Patient</dt><dd id="status-patient">${member.firstName} ${member.lastName}</dd>` : ''}
<dt>Reference</dt><dd id="status-result-reference">${authorization.reference}</dd>
${authorization.number ? html`<dt>Authorization number</dt><dd id="authorization-number">${authorization.number}</dd>` : ''}
${authorization.decisionDate ? html`<dt>Decision date</dt><dd id="decision-date">${authorization.decisionDate}</dd>` : ''}
</dl>
</section>`;
};

export const statusLookupPage = (session: Signed, query: Record<string, string> = {}, result?: LookupResult) =>
  layout(
    'status-lookup',
    'Authorization status',
    html`<h1>Authorization status</h1>
<form id="status-form" method="post" action="/authorizations/status">
<input type="hidden" name="csrf" value="${session.csrf}">
<label for="status-member-id">Member ID</label>
<input id="status-member-id" name="memberId" value="${query.memberId ?? ''}" required>
<label for="status-reference">Provider reference</label>
<input id="status-reference" name="reference" value="${query.reference ?? ''}" required>
<label for="status-from-date">Service from date (optional)</label>
<input id="status-from-date" name="fromDate" type="date" value="${query.fromDate ?? ''}">
<button id="look-up" type="submit">Look up</button>
</form>
${result ? renderResult(result) : ''}`,
    session,
  );

export const messagePage = (page: 'not-found' | 'error', title: string, message: string) =>
  layout(page, title, html`<h1>${title}</h1><p id="message">${message}</p><p><a href="/">Home</a></p>`);

export const STYLESHEET = `body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f4f6f8}
header{display:flex;justify-content:space-between;align-items:center;padding:.6rem 1.2rem;background:#0b4f6c;color:#fff}
header a.brand{color:#fff;font-weight:600;text-decoration:none}
nav{display:flex;gap:1rem;align-items:center}nav form{margin:0}
main{max-width:60rem;margin:1.5rem auto;padding:1.5rem;background:#fff;border-radius:6px}
label{display:block;margin-top:.6rem;font-size:.9rem}
input,select{padding:.35rem;min-width:16rem;font:inherit}
button{margin-top:1rem;padding:.45rem 1rem;font:inherit}
section{margin-bottom:1.2rem}fieldset.row{display:flex;flex-wrap:wrap;gap:.2rem 1rem;border:1px solid #d0d7de;margin:.4rem 0}
.field input,.field select{min-width:12rem}
.error{color:#a40e26;font-weight:600}.notice{color:#116329;font-weight:600}
dl{display:grid;grid-template-columns:12rem 1fr}dt{font-weight:600}
table{border-collapse:collapse}th,td{padding:.3rem .5rem;text-align:left;border-bottom:1px solid #d0d7de;white-space:nowrap}
form.decide-form{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center}td.decide{white-space:normal}
body[data-page=operator] main{max-width:84rem}
.decide-form input,.decide-form select{min-width:0;width:9rem}.decide-form button{margin-top:0}
`;

/** Adds a row by cloning the group's template; the only script on the portal. */
export const SCRIPT = `document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-add-row]');
  if (!button) return;
  const group = button.dataset.addRow;
  const rows = document.getElementById(group + '-rows');
  const index = rows.children.length;
  if (index >= Number(button.dataset.max)) return;
  const template = document.getElementById(group + '-row').innerHTML;
  rows.insertAdjacentHTML('beforeend', template.replaceAll('__INDEX__', String(index)).replaceAll('__NUMBER__', String(index + 1)));
});
`;
