import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { prefersHtml, scraperSessionPage } from '#lib/http/scraper-session-page';
import { uuidv7 } from '#lib/ids';
import { outcomeOfExecution } from '#lib/runs/execution-ended';
import { MAX_RUN_STEPS, statusOfOutcome, withStep } from '#lib/runs/run-changes';
import type { ScraperSession } from '#lib/runs/run-views';

const run: RpaRunRecord = {
  clientId: 'c1',
  externalId: 'A-1',
  runId: uuidv7(),
  kind: 'view-on-page',
  clientUserId: 'u1',
  organizationId: 'o1',
  status: 'running',
  steps: [],
  enteredValues: {},
  screenshots: [],
  version: 1,
  createdAt: '2026-11-22T00:00:00.000Z',
  updatedAt: '2026-11-22T00:00:00.000Z',
};

describe('run ids', () => {
  it('are UUIDv7: version 7, RFC variant, and sorted by creation time', () => {
    const ids = [0, 1, 2, 1_000, 86_400_000].map((offset) => uuidv7(1_790_000_000_000 + offset));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].reverse().sort()).toEqual(ids);
    expect(uuidv7(1_790_000_000_000)).not.toBe(uuidv7(1_790_000_000_000));
    expect(uuidv7(0x0123456789ab, Buffer.alloc(10, 0xff))).toBe('01234567-89ab-7fff-bfff-ffffffffffff');
  });
});

describe('run steps', () => {
  it(`keep the first ${MAX_RUN_STEPS - 1} and always the latest, each detail bounded`, () => {
    let steps = withStep([], 't0', 'queued');
    for (let i = 1; i <= 80; i++) steps = withStep(steps, `t${i}`, `step ${i}`, 'x'.repeat(500));
    expect(steps).toHaveLength(MAX_RUN_STEPS);
    expect(steps[0]).toEqual({ at: 't0', step: 'queued' });
    expect(steps.at(-2)?.step).toBe(`step ${MAX_RUN_STEPS - 2}`);
    expect(steps.at(-1)).toMatchObject({ at: 't80', step: 'step 80' });
    expect(steps.at(-1)?.detail).toHaveLength(200);
  });

  it('succeed with form_filled, status_read and not_found_on_portal only', () => {
    expect(['form_filled', 'status_read', 'not_found_on_portal'].map((o) => statusOfOutcome(o as never))).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    for (const outcome of ['wrong_password', 'portal_timeout', 'request_not_found', 'portal_error'] as const) {
      expect(statusOfOutcome(outcome)).toBe('failed');
    }
  });
});

describe('the outcome of an execution that ended without its run', () => {
  it('names how it ended: timed out, aborted, or lost (failed unrecorded, or gone); none while it may still record', () => {
    expect(outcomeOfExecution('TIMED_OUT')).toBe('execution_timed_out');
    expect(outcomeOfExecution('ABORTED')).toBe('execution_aborted');
    expect(outcomeOfExecution('FAILED')).toBe('execution_lost');
    expect(outcomeOfExecution('SUCCEEDED')).toBe('execution_lost');
    expect(outcomeOfExecution(undefined)).toBe('execution_lost');
    for (const status of ['RUNNING', 'PENDING_REDRIVE'] as const) expect(outcomeOfExecution(status)).toBeUndefined();
    for (const outcome of ['execution_timed_out', 'execution_aborted', 'execution_lost', 'browser_busy'] as const) {
      expect(statusOfOutcome(outcome)).toBe('failed');
    }
  });
});

describe('the scraper session page', () => {
  it('is HTML for a client that prefers it to JSON', () => {
    expect(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml('text/*, application/json;q=0.5')).toBe(true);
    expect(prefersHtml(undefined)).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml('application/json')).toBe(false);
    expect(prefersHtml('text/html;q=0.5, application/json')).toBe(false);
    expect(prefersHtml('text/html;q=0, */*')).toBe(false);
  });

  it('escapes every value, allows images from the screenshots’ origin only, and refreshes while a run is active', () => {
    const hostile = '"><img src=x onerror=alert(1)>';
    const session: ScraperSession = {
      requestExternalId: 'A-1',
      clientUserId: 'u1',
      tokenExpiresAt: '2026-11-22T00:15:00.000Z',
      authorization: {
        status: 'pending',
        number: hostile,
        decisionDate: null,
        lastCheckedAt: null,
        channel: null,
        items: [],
        reasons: [],
        decisionDueAt: null,
        informationRequested: null,
      },
      authorizationHistory: [
        {
          changeId: '01900000-0000-7000-8000-000000000002',
          changedAt: '2026-11-22T00:10:00.000Z',
          previous: { status: 'approved', number: 'SBX-1', decisionDate: '2026-11-20' },
          current: { status: 'pending', number: hostile, decisionDate: null },
          changedBy: { kind: 'api', requestId: hostile },
          items: [
            { sequence: 1, status: 'approved', reasons: [] },
            { sequence: 2, status: 'denied', reasons: [{ system: null, code: hostile, text: 'Jane Example: words' }] },
          ],
          reasons: [{ system: null, code: 'note', text: 'Jane Example: more words' }],
          informationRequested: null,
        },
        {
          changeId: '01900000-0000-7000-8000-000000000001',
          changedAt: '2026-11-22T00:05:00.000Z',
          previous: { status: 'not_submitted', number: null, decisionDate: null },
          current: { status: 'approved', number: 'SBX-1', decisionDate: '2026-11-20' },
          changedBy: { kind: 'run', runId: run.runId },
          items: [],
          reasons: [],
          informationRequested: null,
        },
      ],
      runs: [
        {
          runId: run.runId,
          requestExternalId: 'A-1',
          kind: 'view-on-page',
          batchId: null,
          clientUserId: 'u1',
          portalAccountId: 'p1',
          portalId: 'sandbox',
          channel: 'portal',
          payerConnectionId: null,
          status: 'running',
          outcome: null,
          steps: [{ at: 't', step: 'logged in', detail: hostile }],
          enteredValues: { [hostile]: { value: hostile, readBack: false } },
          screenshots: [
            {
              n: 1,
              label: hostile,
              capturedAt: 't',
              url: 'https://bucket.s3.us-east-1.amazonaws.com/c1/rpa/r/1.png?X-Amz-Signature=a&b="c"',
              urlExpiresAt: 't',
            },
          ],
          authorization: null,
          executionId: null,
          createdAt: 't',
          updatedAt: 't',
          version: 1,
        },
      ],
    };
    const { body, headers } = scraperSessionPage(session);
    expect(body).not.toContain('<img src=x');
    expect(body).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(body).toContain(
      'src="https://bucket.s3.us-east-1.amazonaws.com/c1/rpa/r/1.png?X-Amz-Signature=a&amp;b=&quot;c&quot;"',
    );
    expect(body).toContain('<meta http-equiv="refresh" content="5">');
    // The authorization's latest changes, newest first, escaped like the rest.
    const history = /<table id="authorization-history">([\s\S]*?)<\/table>/.exec(body)![1]!;
    const rows = [...history.matchAll(/<tr data-change-id="([^"]+)">(.*?)<\/tr>/g)];
    expect(rows.map((row) => row[1])).toEqual(session.authorizationHistory.map((entry) => entry.changeId));
    expect(rows[0]![2]).toContain('<td>approved SBX-1 decided 2026-11-20</td>');
    expect(rows[0]![2]).toContain('<td class="status">pending &quot;&gt;&lt;img src=x onerror=alert(1)&gt;</td>');
    expect(rows[0]![2]).toContain('API call <code>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</code>');
    // Why, in codes only: the payer's text stays in the API.
    expect(rows[0]![2]).toContain(
      '<td class="reasons">#2 denied: &quot;&gt;&lt;img src=x onerror=alert(1)&gt;; whole: note</td>',
    );
    expect(body).not.toContain('Jane Example');
    expect(rows[1]![2]).toContain('<td class="reasons"></td>');
    expect(rows[1]![2]).toContain('<td>not_submitted</td>');
    expect(rows[1]![2]).toContain(`run <code>${run.runId}</code>`);
    expect(headers['Content-Security-Policy']).toMatch(
      /^default-src 'none'; img-src https:\/\/bucket\.s3\.us-east-1\.amazonaws\.com; style-src 'sha256-[^']+'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/,
    );

    // The one inline style is the one the policy allows, by its hash.
    const style = /<style>([\s\S]*?)<\/style>/.exec(body)![1]!;
    expect(headers['Content-Security-Policy']).toContain(
      `style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    );

    const quiet = scraperSessionPage({
      ...session,
      runs: [{ ...session.runs[0]!, status: 'failed', screenshots: [] }],
    });
    expect(quiet.body).not.toContain('http-equiv="refresh"');
    expect(scraperSessionPage({ ...session, authorizationHistory: [] }).body).toContain(
      '<h2>Authorization history</h2>\n<p class="muted">No change yet.</p>',
    );
    expect(quiet.headers['Content-Security-Policy']).toContain("img-src 'none'");
  });

  it('shows where the authorization stands: its deadline, the channel, what the payer asks for, and each service', () => {
    const decided = (sequence: number, status: 'approved' | 'denied', code: string | null) => ({
      sequence,
      serviceCode: { system: 'http://www.ama-assn.org/go/cpt', code: `7214${sequence}` },
      status,
      reviewActionCode: status === 'approved' ? 'A1' : 'A3',
      number: status === 'approved' ? 'PA-1' : null,
      authorizedPeriod: null,
      authorizedQuantity: null,
      reasons: code ? [{ system: null, code, text: 'Jane Example: words' }] : [],
    });
    const session: ScraperSession = {
      requestExternalId: 'A-2',
      clientUserId: 'u1',
      tokenExpiresAt: '2026-11-22T00:15:00.000Z',
      authorization: {
        status: 'pending',
        number: null,
        decisionDate: null,
        lastCheckedAt: '2026-11-22T00:01:00.000Z',
        channel: 'pas',
        items: [decided(1, 'approved', null), decided(2, 'denied', '<b>MN</b>')],
        reasons: [],
        decisionDueAt: '2026-11-29T00:00:00.000Z',
        informationRequested: {
          requestedAt: '2026-11-22T00:01:00.000Z',
          dueBy: '2026-12-06',
          items: [
            { code: { system: 'http://loinc.org', code: '18776-5' }, text: 'Jane Example: the plan', sequence: 1 },
            { code: { system: 'http://loinc.org', code: '11506-3' }, text: null, sequence: null },
          ],
        },
      },
      authorizationHistory: [],
      runs: [],
    };
    const { body } = scraperSessionPage(session);
    expect(body).toContain('<dt>Decision due</dt><dd>2026-11-29T00:00:00.000Z</dd>');
    expect(body).toContain('<dt>Read through</dt><dd>the payer&#39;s API</dd>');
    expect(body).toContain('<h2>Information requested by <time datetime="2026-12-06">2026-12-06</time></h2>');
    expect(body).toContain(
      '<ul id="information-requested"><li><code>18776-5</code> (service 1)</li><li><code>11506-3</code></li></ul>',
    );
    const items = /<table id="authorization-items">([\s\S]*?)<\/table>/.exec(body)![1]!;
    const rows = [...items.matchAll(/<tr data-sequence="(\d+)">(.*?)<\/tr>/g)];
    expect(rows.map((row) => row[1])).toEqual(['1', '2']);
    expect(rows[0]![2]).toBe('<td>1</td><td>72141</td><td class="status">approved</td><td>PA-1</td><td></td>');
    expect(rows[1]![2]).toBe(
      '<td>2</td><td>72142</td><td class="status">denied</td><td></td><td>&lt;b&gt;MN&lt;/b&gt;</td>',
    );
    expect(body).not.toContain('Jane Example');
    // A request that only a portal read: no services, no requests for information.
    const portal = scraperSessionPage({
      ...session,
      authorization: {
        ...session.authorization,
        channel: 'portal',
        items: [],
        decisionDueAt: null,
        informationRequested: null,
      },
    }).body;
    expect(portal).not.toContain('authorization-items');
    expect(portal).not.toContain('Information requested');
    expect(portal).toContain('<dt>Read through</dt><dd>the payer&#39;s portal</dd>');
  });

  it('shows where the request stands in the lifecycle: the status and the statuses the table lets it move to', () => {
    const session = (authorization: Partial<ScraperSession['authorization']>): ScraperSession => ({
      requestExternalId: 'A-3',
      clientUserId: 'u1',
      tokenExpiresAt: '2026-11-22T00:15:00.000Z',
      authorization: {
        status: 'approved',
        number: 'PA-1',
        decisionDate: '2026-11-21',
        lastCheckedAt: '2026-11-22T00:01:00.000Z',
        channel: 'pas',
        items: [],
        reasons: [],
        decisionDueAt: null,
        informationRequested: null,
        ...authorization,
      },
      authorizationHistory: [],
      runs: [],
    });
    const approved = scraperSessionPage(session({})).body;
    expect(approved).toContain('<p id="lifecycle-state">Now <span class="status">approved</span></p>');
    // From the table (lib/requests/authorization-lifecycle.ts): a claim update or a cancel, never back to not_submitted.
    expect(/<ul id="lifecycle-next">(.*?)<\/ul>/.exec(approved)![1]).toBe(
      '<li>pending</li><li>partially_approved</li><li>denied</li><li>cancelled</li>',
    );
    const asked = scraperSessionPage(
      session({
        status: 'pending',
        number: null,
        decisionDate: null,
        informationRequested: { requestedAt: '2026-11-22T00:01:00.000Z', dueBy: null, items: [] },
      }),
    ).body;
    expect(asked).toContain(
      '<p id="lifecycle-state">Now <span class="status">pending</span> <span class="muted">(information requested)</span></p>',
    );
    expect(/<ul id="lifecycle-next">(.*?)<\/ul>/.exec(asked)![1]).toBe(
      '<li>not_found</li><li>approved</li><li>partially_approved</li><li>denied</li><li>cancelled</li>',
    );
    const cancelled = scraperSessionPage(session({ status: 'cancelled' })).body;
    expect(cancelled).toContain('<p id="lifecycle-next" class="muted">Final: it moves no further.</p>');
  });
});
