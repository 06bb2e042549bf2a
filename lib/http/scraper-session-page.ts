import { createHash } from 'node:crypto';
import { nextStatesOf } from '#lib/requests/authorization-lifecycle';
import type { ScraperSession } from '#lib/runs/run-views';

/*
 * The scraper session as a web page: server-rendered, every value escaped, nothing loaded from
 * anywhere but the screenshots' presigned S3 URLs, under a Content-Security-Policy that allows
 * exactly that (no script at all; the one inline style by its hash). While a run is queued or
 * running the page reloads itself every 5 seconds (the screenshots' URLs live 60): a reload the
 * page starts itself, so the browser sends the session cookie with it.
 */

/** The quality (RFC 9110 `q`) the Accept header gives a media type; 1 without a header. */
const qualityOf = (accept: string, type: string, subtype: string): number => {
  let best: { specificity: number; q: number } = { specificity: -1, q: 0 };
  for (const range of accept.split(',')) {
    const [mediaRange = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const [rangeType, rangeSubtype] = mediaRange.split('/');
    const specificity =
      rangeType === type && rangeSubtype === subtype
        ? 2
        : rangeType === type && rangeSubtype === '*'
          ? 1
          : rangeType === '*' && rangeSubtype === '*'
            ? 0
            : -1;
    if (specificity <= best.specificity) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const value = q ? Number(q.slice(2)) : 1;
    best = { specificity, q: Number.isFinite(value) ? value : 0 };
  }
  return best.q;
};

/** HTML when the client prefers it to JSON (a browser does; `*\/*` alone, or no Accept, gets JSON). */
export const prefersHtml = (accept: string | undefined): boolean => {
  if (!accept) return false;
  return qualityOf(accept, 'text', 'html') > qualityOf(accept, 'application', 'json');
};

const escapeHtml = (value: unknown): string =>
  String(value ?? '').replace(
    /[&<>"']/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!,
  );

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1b1b1b; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; border-top: 1px solid #ccc; padding-top: 1rem; }
h3 { font-size: 1rem; margin-bottom: .3rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; } dt { font-weight: 600; } dd { margin: 0; }
table { border-collapse: collapse; } th, td { border: 1px solid #ddd; padding: .2rem .5rem; text-align: left; }
time { font-variant-numeric: tabular-nums; color: #555; } figure { margin: .5rem 0 1rem; }
img { max-width: 100%; border: 1px solid #bbb; } .status { font-weight: 700; } .failed { color: #a40000; }
.succeeded { color: #006b1b; } .muted { color: #666; }
`;
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

const ACTIVE = new Set(['queued', 'running']);

/** Terms with a value, each optionally with a class on its value. */
const definitionList = (entries: Array<[term: string, value: unknown, className?: string]>) =>
  `<dl>${entries
    .filter(([, value]) => value !== null && value !== undefined && value !== '')
    .map(
      ([term, value, className]) =>
        `<dt>${escapeHtml(term)}</dt><dd${className ? ` class="${escapeHtml(className)}"` : ''}>${escapeHtml(value)}</dd>`,
    )
    .join('')}</dl>`;

/** Whether the portal's field held what was typed (null: a run recorded before this was checked). */
const READ_BACK: Record<string, string> = { true: 'the same', false: 'different', null: 'not checked' };

const runSection = (run: ScraperSession['runs'][number]) => {
  const steps = run.steps
    .map(
      (step) =>
        `<li><time datetime="${escapeHtml(step.at)}">${escapeHtml(step.at)}</time> ${escapeHtml(step.step)}${
          step.detail ? ` <span class="muted">${escapeHtml(step.detail)}</span>` : ''
        }</li>`,
    )
    .join('');
  const values = Object.entries(run.enteredValues);
  const screenshots = run.screenshots
    .map(
      (shot) =>
        `<figure><img src="${escapeHtml(shot.url)}" alt="${escapeHtml(shot.label)}"><figcaption>${escapeHtml(
          shot.label,
        )} <time datetime="${escapeHtml(shot.capturedAt)}">${escapeHtml(shot.capturedAt)}</time></figcaption></figure>`,
    )
    .join('');
  return `<section>
<h2>${escapeHtml(run.kind)} run <code>${escapeHtml(run.runId)}</code></h2>
${definitionList([
  ['Status', run.status, `status ${run.status}`],
  ['Outcome', run.outcome],
  ['Portal', run.portalId],
  ['Portal account', run.portalAccountId],
  [
    'Portal answer',
    run.authorization && [run.authorization.status, run.authorization.number].filter(Boolean).join(' '),
  ],
  ['Started', run.createdAt],
  ['Last change', run.updatedAt],
])}
<h3>Steps</h3>
<ol>${steps}</ol>
<h3>Values entered</h3>
${
  values.length === 0
    ? '<p class="muted">None.</p>'
    : `<table><thead><tr><th scope="col">Field</th><th scope="col">Value typed</th><th scope="col">Read back by the portal</th></tr></thead><tbody>${values
        .map(
          ([field, entry]) =>
            `<tr><th scope="row">${escapeHtml(field)}</th><td>${escapeHtml(entry.value)}</td><td>${READ_BACK[String(entry.readBack)]}</td></tr>`,
        )
        .join('')}</tbody></table>`
}
<h3>Screenshots</h3>
${screenshots || '<p class="muted">None.</p>'}
</section>`;
};

type SessionAuthorization = ScraperSession['authorization'];

const CHANNEL_TEXT: Record<NonNullable<SessionAuthorization['channel']>, string> = {
  pas: "the payer's API",
  portal: "the payer's portal",
};

/** Each requested service as the payer decided it (the payer-API channel reads them): what, how, and why. */
const itemsSection = (items: SessionAuthorization['items']) => {
  if (items.length === 0) return '';
  const rows = items
    .map(
      (item) =>
        `<tr data-sequence="${escapeHtml(item.sequence)}"><td>${escapeHtml(item.sequence)}</td><td>${escapeHtml(
          item.serviceCode?.code ?? '',
        )}</td><td class="status">${escapeHtml(item.status)}</td><td>${escapeHtml(item.number ?? '')}</td><td>${escapeHtml(
          item.reasons.map((reason) => reason.code).join(', '),
        )}</td></tr>`,
    )
    .join('');
  return `<h2>Services</h2>
<table id="authorization-items"><thead><tr><th scope="col">#</th><th scope="col">Service</th><th scope="col">Status</th><th scope="col">Number</th><th scope="col">Reason codes</th></tr></thead><tbody>${rows}</tbody></table>`;
};

/**
 * What the payer asked for before it decides, and by when (a pended answer's requests for documentation): codes,
 * as the history shows reasons; the payer's words stay in the API.
 */
const informationSection = (requested: SessionAuthorization['informationRequested']) => {
  if (!requested) return '';
  const entries = requested.items
    .map(
      (item) =>
        `<li><code>${escapeHtml(item.code.code)}</code>${item.sequence === null ? '' : ` (service ${escapeHtml(item.sequence)})`}</li>`,
    )
    .join('');
  const due = requested.dueBy
    ? ` by <time datetime="${escapeHtml(requested.dueBy)}">${escapeHtml(requested.dueBy)}</time>`
    : '';
  return `<h2>Information requested${due}</h2>
<ul id="information-requested">${entries}</ul>`;
};

/**
 * Where the request stands in the authorization's lifecycle (docs/authorization-lifecycle.md, from its one table):
 * the status, a pended one's turn (the payer asks for information), and the other statuses it can move to.
 */
const lifecycleSection = (authorization: SessionAuthorization) => {
  const next = nextStatesOf(authorization.status).filter((status) => status !== authorization.status);
  const turn = authorization.informationRequested ? ' <span class="muted">(information requested)</span>' : '';
  return `<h2>Lifecycle</h2>
<p id="lifecycle-state">Now <span class="status">${escapeHtml(authorization.status)}</span>${turn}</p>
${
  next.length === 0
    ? '<p id="lifecycle-next" class="muted">Final: it moves no further.</p>'
    : `<p>Can move to:</p>\n<ul id="lifecycle-next">${next.map((status) => `<li>${escapeHtml(status)}</li>`).join('')}</ul>`
}`;
};

/** A state of the authorization in a few words: its status, number and decision date when it has them. */
const stateText = (state: ScraperSession['authorizationHistory'][number]['current']) =>
  [state.status, state.number, state.decisionDate && `decided ${state.decisionDate}`].filter(Boolean).join(' ');

/** What changed it: a run (without its id when it ran for another organization than the viewer's), or a call. */
const changedByText = (changedBy: ScraperSession['authorizationHistory'][number]['changedBy']) => {
  if (changedBy.kind === 'api') return `API call <code>${escapeHtml(changedBy.requestId)}</code>`;
  if (changedBy.kind === 'deadline') return `decision deadline passed (${escapeHtml(changedBy.decisionDueAt)})`;
  return changedBy.runId === null ? 'a run of another organization' : `run <code>${escapeHtml(changedBy.runId)}</code>`;
};

type HistoryEntry = ScraperSession['authorizationHistory'][number];

/**
 * Why a change denied in whole or in part, in codes (the payer's text is in the API): each item that has
 * reasons, `#<sequence> <status>: <codes>`, then the codes for the whole. Empty for any other change.
 */
const reasonsText = ({ items, reasons }: Pick<HistoryEntry, 'items' | 'reasons'>) =>
  [
    ...items
      .filter((item) => item.reasons.length > 0)
      .map((item) => `#${item.sequence} ${item.status}: ${item.reasons.map((reason) => reason.code).join(', ')}`),
    ...(reasons.length > 0 ? [`whole: ${reasons.map((reason) => reason.code).join(', ')}`] : []),
  ].join('; ');

/** The latest changes of the authorization, newest first: when, from what to what, why, and what changed it. */
const historySection = (history: ScraperSession['authorizationHistory']) => {
  if (history.length === 0) return '<h2>Authorization history</h2>\n<p class="muted">No change yet.</p>';
  const rows = history
    .map(
      (entry) =>
        `<tr data-change-id="${escapeHtml(entry.changeId)}"><td><time datetime="${escapeHtml(entry.changedAt)}">${escapeHtml(
          entry.changedAt,
        )}</time></td><td>${escapeHtml(stateText(entry.previous))}</td><td class="status">${escapeHtml(
          stateText(entry.current),
        )}</td><td class="reasons">${escapeHtml(reasonsText(entry))}</td><td>${changedByText(entry.changedBy)}</td></tr>`,
    )
    .join('');
  return `<h2>Authorization history</h2>
<table id="authorization-history"><thead><tr><th scope="col">Changed</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Reason codes</th><th scope="col">By</th></tr></thead><tbody>${rows}</tbody></table>`;
};

/** The page and the headers it must be served with (its Content-Security-Policy above all). */
export const scraperSessionPage = (session: ScraperSession): { body: string; headers: Record<string, string> } => {
  const imageOrigins = [
    ...new Set(session.runs.flatMap((run) => run.screenshots.map((shot) => new URL(shot.url).origin))),
  ];
  const active = session.runs.some((run) => ACTIVE.has(run.status));
  const { authorization } = session;
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${active ? '<meta http-equiv="refresh" content="5">\n' : ''}<title>Scraper session: request ${escapeHtml(session.requestExternalId)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Request <code>${escapeHtml(session.requestExternalId)}</code></h1>
${definitionList([
  ['Authorization', authorization.status],
  ['Authorization number', authorization.number],
  ['Decision date', authorization.decisionDate],
  ['Decision due', authorization.decisionDueAt],
  ['Read through', authorization.channel && CHANNEL_TEXT[authorization.channel]],
  ['Last checked', authorization.lastCheckedAt],
  ['Client user', session.clientUserId],
  ['Access ends', session.tokenExpiresAt],
])}
${active ? '<p class="muted">A run is in progress: this page reloads every 5 seconds.</p>' : ''}
${lifecycleSection(authorization)}
${informationSection(authorization.informationRequested)}
${itemsSection(authorization.items)}
${historySection(session.authorizationHistory)}
${session.runs.length === 0 ? '<p>No automation has run on this request yet.</p>' : session.runs.map(runSection).join('\n')}
</body>
</html>
`;
  return { body, headers: pageHeaders(imageOrigins) };
};

const pageHeaders = (imageOrigins: string[]) => {
  const csp = [
    "default-src 'none'",
    `img-src ${imageOrigins.length > 0 ? imageOrigins.join(' ') : "'none'"}`,
    `style-src ${STYLE_HASH}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp, 'X-Frame-Options': 'DENY' };
};

/**
 * What a browser gets when it arrives from another site's link without its session cookie (the
 * SameSite=Strict cookie is withheld on such a navigation and its redirects): nothing of the
 * request, and an immediate reload of the same URL, which this page starts, so the browser sends
 * the cookie then. Served with a 401: without the cookie that reload is a 401 problem, no loop.
 */
export const continuePage = (): { body: string; headers: Record<string, string> } => ({
  body: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0">
<title>Scraper session</title>
</head>
<body>
<p>Opening the scraper session…</p>
</body>
</html>
`,
  headers: pageHeaders([]),
});
