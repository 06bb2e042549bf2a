import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { enteredValuesFromStored, type RpaRunRecord, RUN_OUTCOMES, type RunOutcome } from '#lib/entities/rpa';
import { uuidv7 } from '#lib/ids';
import { readRouteAsset } from '#lib/openapi/route-assets';
import { RUN_STEP_TEXTS, rpaSchemas, SCREENSHOT_LABELS } from '#lib/openapi/rpa-schemas';
import { SENDING_STEPS } from '#lib/payer-api/submit-pas-claim';
import { checkPortalAuthorization, enteredValuesOf } from '#lib/portal/portal-answers';
import { CREDENTIALS_ISSUED_STEP } from '#lib/portal/run-credentials';
import { OPENAPI_DOCUMENT } from '#lib/routes/route-table';
import { BATCH_REFUSAL_REASONS } from '#lib/runs/errors';
import { statusOfOutcome, withStep } from '#lib/runs/run-changes';
import { SESSION_HISTORY } from '#lib/runs/run-limits';
import { OUTCOME_STEPS } from '#lib/runs/run-recorder';
import { type BatchProgress, runViewOf, type ScraperSession } from '#lib/runs/run-views';

/*
 * The automation's answers as the served document describes them (lib/openapi/rpa-schemas.ts),
 * checked with ajv's 2020-12 validator: the document holds the schemas, the representations the code
 * builds pass them, a drift fails them, and the steps and labels the code writes are the enums'.
 */
type Json = Record<string, any>;
const document: Json = JSON.parse(readRouteAsset(OPENAPI_DOCUMENT));
const ajv = new Ajv2020({ strict: true, allErrors: true, formats: fullFormats });
// The document is not a schema: its other members are words ajv should pass over, not refuse.
ajv.addVocabulary(['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'webhooks', 'components', 'example']);
ajv.addSchema(document, 'openapi');
const validator = (name: string) => ajv.getSchema(`openapi#/components/schemas/${name}`)!;
/** The body as the wire carries it: JSON drops undefined members. */
const errorsOf = (name: string, body: unknown) => {
  const validate = validator(name);
  return validate(JSON.parse(JSON.stringify(body))) ? [] : validate.errors;
};

const at = '2026-11-24T10:00:00.000Z';
const clientUserId = 'user-1';
const record = (change: Partial<RpaRunRecord> = {}): RpaRunRecord => ({
  clientId: 'client-1',
  externalId: 'REQ-1',
  runId: uuidv7(),
  kind: 'view-on-page',
  clientUserId,
  organizationId: 'org-1',
  portalAccountId: 'acct-1',
  portalId: 'sandbox',
  status: 'queued',
  steps: withStep(withStep([], at, 'queued'), at, 'portal account selected', 'sandbox acct-1'),
  enteredValues: {},
  screenshots: [],
  executionArn: 'arn:aws:states:us-east-1:000000000000:execution:ViewOnPage:run',
  version: 1,
  createdAt: at,
  updatedAt: at,
  ...change,
});
const ended = (outcome: RunOutcome, change: Partial<RpaRunRecord> = {}) => {
  const run = record(change);
  return {
    ...run,
    status: statusOfOutcome(outcome),
    outcome,
    steps: withStep(run.steps, at, OUTCOME_STEPS[outcome], outcome),
  };
};
const screenshot = { objectKey: 'client-1/rpa/run/1.png', label: 'the filled form, before submitting', capturedAt: at };

describe('the automation schemas in the document', () => {
  it('are the module’s, and compile in strict mode with every reference resolved', () => {
    for (const [name, schema] of Object.entries(rpaSchemas)) {
      expect(document.components.schemas[name]).toEqual(schema);
      expect(typeof validator(name)).toBe('function');
    }
  });

  it.each(RUN_OUTCOMES)('pass a run that ended %s, as GET …/runs/{runId} answers it', (outcome) => {
    expect(errorsOf('Run', runViewOf(ended(outcome, { screenshots: [screenshot] })))).toEqual([]);
  });

  it('pass a run queued before accounts were chosen, with nothing but nulls to show', () => {
    const { portalAccountId: _a, portalId: _p, executionArn: _e, ...legacy } = record();
    const view = runViewOf(legacy);
    expect(view).toMatchObject({ portalAccountId: null, portalId: null, executionId: null, outcome: null });
    expect(errorsOf('Run', view)).toEqual([]);
    // A run whose execution never started: failed, no outcome.
    expect(
      errorsOf('Run', runViewOf({ ...legacy, status: 'failed', steps: withStep(legacy.steps, at, 'not started') })),
    ).toEqual([]);
  });

  it('pass whatever values a form filling records, within the bounds the schema states', () => {
    const filled = fc.dictionary(fc.string({ maxLength: 150, unit: 'grapheme' }), fc.string({ maxLength: 1200 }), {
      maxKeys: 260,
    });
    fc.assert(
      fc.property(filled, filled, (typed, held) => {
        const enteredValues = enteredValuesOf({ typed, held: { ...typed, ...held } });
        expect(errorsOf('Run', runViewOf(record({ enteredValues })))).toEqual([]);
      }),
      { numRuns: 50 },
    );
    // At the bounds: more fields than kept, names and values longer than kept.
    const typed = Object.fromEntries(
      Array.from({ length: 250 }, (_, i) => [`field-${i}-`.padEnd(150, 'x'), 'v'.repeat(1200)]),
    );
    const atBounds = enteredValuesOf({ typed, held: {} });
    expect(Object.keys(atBounds)).toHaveLength(200);
    expect(errorsOf('Run', runViewOf(record({ enteredValues: atBounds })))).toEqual([]);
    // Runs recorded before read-back was checked: the page's value, readBack null.
    const legacy = enteredValuesFromStored({ memberId: 'MBR-1', note: 'x'.repeat(1000) });
    expect(errorsOf('Run', runViewOf(record({ enteredValues: legacy })))).toEqual([]);
  });

  it('pass every portal answer the worker keeps, and the run and batch item that carry it', () => {
    const answers = fc.record({
      status: fc.constantFrom('approved', 'partially_approved', 'denied', 'pended', 'not_found', 'other'),
      number: fc.option(fc.stringMatching(/^[A-Za-z0-9-]{0,60}$/), { nil: undefined }),
      decisionDate: fc.option(
        fc.date({ noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10)),
        { nil: undefined },
      ),
    });
    let kept = 0;
    fc.assert(
      fc.property(answers, (answer) => {
        const checked = checkPortalAuthorization(answer);
        if (!('record' in checked)) return;
        kept++;
        expect(errorsOf('PortalAuthorization', checked.record)).toEqual([]);
        const run = ended('status_read', { kind: 'check-auth-status', authorization: checked.record });
        expect(errorsOf('Run', runViewOf(run))).toEqual([]);
      }),
    );
    expect(kept).toBeGreaterThan(0);
  });

  it('pass a batch’s progress and a scraper session', () => {
    const run = ended('status_read', {
      kind: 'check-auth-status',
      batchId: crypto.randomUUID(),
      authorization: { status: 'pended', number: 'SBX-1', decisionDate: null },
      screenshots: [{ ...screenshot, label: 'the authorization status' }],
    });
    const progress: BatchProgress = {
      batchId: run.batchId!,
      status: 'running',
      total: 2,
      done: 1,
      failed: 0,
      executionId: null,
      createdAt: at,
      finishedAt: null,
      items: [
        {
          requestExternalId: 'REQ-1',
          runId: run.runId,
          status: run.status,
          outcome: run.outcome,
          authorization: run.authorization!,
        },
        { requestExternalId: 'REQ-2', runId: uuidv7(), status: 'queued', outcome: null, authorization: null },
      ],
    };
    expect(errorsOf('BatchProgress', progress)).toEqual([]);
    const session: ScraperSession = {
      requestExternalId: 'REQ-1',
      clientUserId,
      tokenExpiresAt: at,
      authorization: {
        status: 'pending',
        number: 'SBX-1',
        decisionDate: null,
        lastCheckedAt: at,
        channel: 'portal',
        items: [],
        reasons: [],
        decisionDueAt: null,
        informationRequested: null,
      },
      authorizationHistory: [
        {
          changeId: uuidv7(),
          changedAt: at,
          previous: { status: 'not_submitted', number: null, decisionDate: null },
          current: { status: 'pending', number: 'SBX-1', decisionDate: null },
          changedBy: { kind: 'run', runId: run.runId },
          items: [],
          reasons: [],
          informationRequested: null,
        },
      ],
      runs: [
        {
          ...runViewOf(run),
          screenshots: [
            {
              n: 1,
              label: 'the authorization status',
              capturedAt: at,
              url: 'http://127.0.0.1:4569/b/k.png?X-Amz-Signature=1',
              urlExpiresAt: at,
            },
          ],
        },
      ],
    };
    expect(errorsOf('ScraperSession', session)).toEqual([]);
    // The history holds ids, statuses and dates: nothing else, and at most SESSION_HISTORY entries.
    const [entry] = session.authorizationHistory;
    for (const drifted of [
      { ...session, authorizationHistory: [{ ...entry, patient: { lastName: 'Doe' } }] },
      { ...session, authorizationHistory: [{ ...entry, current: { ...entry!.current, memberId: 'M-1' } }] },
      { ...session, authorizationHistory: Array.from({ length: SESSION_HISTORY + 1 }, () => entry) },
      { ...session, authorizationHistory: undefined },
    ]) {
      expect(errorsOf('ScraperSession', drifted)).not.toEqual([]);
    }
  });

  it('pass a batch started as the handler answers it, with and without `partial`, every refusal reason included', () => {
    const started = { batchId: crypto.randomUUID(), executionId: 'arn', total: 2 };
    expect(errorsOf('BatchStarted', started)).toEqual([]);
    expect(errorsOf('BatchStarted', { ...started, requests: [] })).toEqual([]);
    for (const reason of BATCH_REFUSAL_REASONS) {
      expect(errorsOf('BatchStarted', { ...started, requests: [{ requestExternalId: 'REQ-1', reason }] })).toEqual([]);
    }
  });

  it('refuse a drift: a member added or missing, a value outside the enums', () => {
    const view = runViewOf(ended('form_filled', { screenshots: [screenshot] }));
    const { outcome: _outcome, ...withoutOutcome } = view;
    const refused: Array<[string, unknown]> = [
      ['Run', { ...view, organizationId: 'org-1' }],
      ['Run', withoutOutcome],
      ['Run', { ...view, status: 'done' }],
      ['Run', { ...view, outcome: 'finished' }],
      ['Run', { ...view, steps: [{ at, step: 'the portal said: <b>hi</b>' }] }],
      ['Run', { ...view, screenshots: [{ n: 1, label: 'x', capturedAt: at }] }],
      ['Run', { ...view, screenshots: [{ ...screenshot, n: 1 }] }],
      ['Run', { ...view, enteredValues: { memberId: 'MBR-1' } }],
      ['Run', { ...view, createdAt: 'yesterday' }],
      ['PortalAuthorization', { status: 'approved', number: 'SBX 1', decisionDate: null }],
      ['RpaAccessToken', { accessToken: 'a.b.c', scraperUri: 'http://x/session', expiresAt: at }],
      ['RunStarted', { runId: view.runId, executionId: null, status: 'queued' }],
      ['BatchStarted', { batchId: crypto.randomUUID(), executionId: 'arn', total: 26 }],
      ...[
        [{ requestExternalId: 'REQ-1', reason: 'no_account' }],
        [{ requestExternalId: 'REQ-1' }],
        [{ requestExternalId: 'REQ-1', reason: 'request_not_found', detail: 'gone' }],
        Array.from({ length: 25 }, (_, i) => ({ requestExternalId: `REQ-${i}`, reason: 'request_not_found' })),
      ].map((requests): [string, unknown] => [
        'BatchStarted',
        { batchId: crypto.randomUUID(), executionId: 'arn', total: 1, requests },
      ]),
    ];
    for (const [name, body] of refused) expect(errorsOf(name, body), JSON.stringify(body)).not.toEqual([]);
  });
});

/** The top-level arguments of each call of `name(` in `source`, as written. */
const callArguments = (source: string, name: string): string[][] => {
  const calls: string[][] = [];
  for (const match of source.matchAll(new RegExp(`\\b${name}\\(`, 'g'))) {
    const args: string[] = [];
    let depth = 0;
    let quote = '';
    let current = '';
    for (const character of source.slice(match.index + match[0].length)) {
      if (quote) {
        if (character === quote) quote = '';
      } else if (`'"\``.includes(character)) quote = character;
      else if ('([{'.includes(character)) depth++;
      else if (')]}'.includes(character) && depth-- === 0) break;
      else if (character === ',' && depth === 0) {
        args.push(current.trim());
        current = '';
        continue;
      }
      current += character;
    }
    args.push(current.trim());
    calls.push(args);
  }
  return calls;
};

describe('what the code writes', () => {
  const sources = ['runs', 'portal', 'payer-api', 'payer-api/cdex'].flatMap((room) =>
    readdirSync(new URL(`../../lib/${room}/`, import.meta.url))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => readFileSync(new URL(`../../lib/${room}/${file}`, import.meta.url), 'utf8')),
  );
  /** A step's or label's argument as its texts; a form not known here fails, so it gets looked at. */
  const textsOf = (argument: string, source: string): string[] => {
    if (/^'[^'`]*'$|^"[^"`]*"$/.test(argument)) return [argument.slice(1, -1)];
    if (argument === 'OUTCOME_STEPS[outcome]') return Object.values(OUTCOME_STEPS);
    if (argument === 'CREDENTIALS_ISSUED_STEP') return [CREDENTIALS_ISSUED_STEP];
    if (argument === 'sendingStepOf(run)') return Object.values(SENDING_STEPS);
    // A parameter passed on: its callers are scanned themselves.
    if (['step', 'label'].includes(argument)) return [];
    const constant = new RegExp(`const ${argument} = ('[^']*'|"[^"]*");`).exec(source);
    if (constant) return [constant[1]!.slice(1, -1)];
    throw new Error(`A step or label written as ${argument}: add its texts to lib/openapi/rpa-schemas.ts and here`);
  };
  const written = (calls: Array<[name: string, position: number]>) =>
    new Set(
      sources.flatMap((source) =>
        calls.flatMap(([name, position]) =>
          callArguments(source, name).flatMap((args) => textsOf(args[position]!, source)),
        ),
      ),
    );

  it('every step text is in the Run schema’s enum, and the enum holds no other but a stored legacy one', () => {
    const steps = written([
      ['withStep', 2],
      ['addStep', 1],
    ]);
    expect(steps.size).toBeGreaterThan(20);
    expect([...steps].filter((step) => !RUN_STEP_TEXTS.includes(step))).toEqual([]);
    expect(RUN_STEP_TEXTS.filter((step) => !steps.has(step))).toEqual([
      "no active portal account of the organization serves the request's payer",
      "the credentials function refused to hand this attempt the account's credentials",
    ]);
    expect(rpaSchemas.RunStep!.properties).toMatchObject({ step: { enum: RUN_STEP_TEXTS } });
  });

  it('every screenshot label is in the enum, and no other', () => {
    expect([...written([['capture', 2]])].sort()).toEqual([...SCREENSHOT_LABELS].sort());
  });
});
