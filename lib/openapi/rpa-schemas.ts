import {
  AUTHORIZATION_STATUSES,
  type Authorization,
  type AuthorizationItem,
  type AuthorizationReason,
  DECISION_LIMITS,
} from '#lib/entities/request';
import {
  type BatchStatus,
  type EnteredValue,
  type PortalAuthorizationRecord,
  RUN_OUTCOMES,
  type RunKind,
  type RunStep,
} from '#lib/entities/rpa';
import { informationRequestedSchema } from '#lib/openapi/information-requested-schema';
import { executionArn, RUN_STATUSES, rpaStartSchemas } from '#lib/openapi/rpa-start-schemas';
import {
  closed,
  everyOf,
  identifier,
  type JsonSchema,
  type Members,
  nullable,
  oneOf,
  ref,
  string,
  timestamp,
  uuid,
} from '#lib/openapi/schema-builders';
import { CREDENTIALS_ISSUED_STEP } from '#lib/portal/run-credentials';
import { PORTAL_IDS } from '#lib/portal-accounts/portal-registry';
import { MAX_RUN_STEPS } from '#lib/runs/run-changes';
import { MAX_BATCH_ITEMS, SCREENSHOT_URL_SECONDS, SESSION_HISTORY, SESSION_RUNS } from '#lib/runs/run-limits';
import { OUTCOME_STEPS } from '#lib/runs/run-recorder';
import type { BatchProgress, RunView, ScraperSession } from '#lib/runs/run-views';
import { SCRAPER_TOKEN_TTL_SECONDS } from '#lib/runs/scraper-token';

/**
 * The automation's answers (docs/rpa.md) as exact JSON Schemas (OpenAPI 3.1): every member the
 * handlers send, closed, so a client generated from the document gets real types and a drift fails
 * the response checks. Enums come from the code's constants; the members of each representation are
 * typed against its TypeScript interface (`satisfies Members<…>`), so tsc fails when one changes
 * without the other. Imported at build time only (scripts/build-openapi.ts).
 */

const RUN_KINDS = everyOf<RunKind>()(['view-on-page', 'check-auth-status', 'submit']);
const BATCH_STATUSES = everyOf<BatchStatus>()(['running', 'done']);
const PORTAL_STATUSES = everyOf<PortalAuthorizationRecord['status']>()([
  'approved',
  'partially_approved',
  'denied',
  'pended',
  'not_found',
]);

/**
 * The steps' fixed texts (docs/rpa.md, "Data"): those the run core, the portal channel and the payer-API
 * channel write, then each outcome's. test/unit/openapi-rpa-schemas.test.ts checks the code writes no other.
 */
export const RUN_STEP_TEXTS = [
  ...new Set([
    'queued',
    'portal account selected',
    'not started',
    'waiting for the portal account',
    'started',
    CREDENTIALS_ISSUED_STEP,
    'logged in',
    'form filled',
    "the portal's answer was refused",
    'screenshot of the failure',
    'the portal did not answer in time; the attempt will be retried',
    // The payer-API channel's (lib/payer-api/).
    'payer connection selected',
    'sending the request to the payer',
    'sending the update of the claim to the payer',
    'sending the cancel of the claim to the payer',
    'asking the payer whether an earlier attempt reached it',
    "the payer's API did not answer; the attempt will be retried",
    'the payer refused a field of the request',
    'the request lacks fields the payer API needs',
    // Documents answering a request for more information, by CDex (lib/payer-api/documents-by-cdex.ts).
    'sending the documents to the payer (CDex $submit-attachment)',
    'the payer took the documents',
    'the payer refused the documents',
    'the request lacks fields CDex needs',
    ...Object.values(OUTCOME_STEPS),
    // no_portal_account's text until the start chose the account (69149bc): stored runs keep it.
    "no active portal account of the organization serves the request's payer",
    // credentials_refused's text before the payer-API channel: stored runs keep it.
    "the credentials function refused to hand this attempt the account's credentials",
  ]),
];

/** The screenshots' labels (lib/portal/portal-work.ts, `capture`). */
export const SCREENSHOT_LABELS = [
  'the filled form, before submitting',
  'the authorization status',
  'the page when it failed',
];

/** Bounds of `enteredValues` (lib/portal/portal-answers.ts, not exported there). */
const MAX_ENTERED_FIELDS = 200;
const MAX_FIELD_NAME = 100;
const MAX_FIELD_VALUE = 1000;
/** A step's detail is sliced to this (lib/runs/run-changes.ts). */
const MAX_STEP_DETAIL = 200;

const runStep = {
  at: timestamp('When it happened'),
  step: oneOf(RUN_STEP_TEXTS, "A fixed text of ours, never a portal's or an error's message"),
  detail: string("Ours too: `attempt n`, the portal and account ids, a field count, the outcome's name…", {
    minLength: 1,
    maxLength: MAX_STEP_DETAIL,
  }),
} satisfies Members<RunStep>;

const enteredValue = {
  value: string("What the automation typed or selected: the request's value, never the page's text", {
    maxLength: MAX_FIELD_VALUE,
  }),
  readBack: nullable({
    type: 'boolean',
    description:
      "Whether the page's field held exactly that afterwards; null: a run recorded before this was checked, whose value is what the page held",
  }),
} satisfies Members<EnteredValue>;

const portalAuthorization = {
  status: oneOf(PORTAL_STATUSES, "The portal's answer, checked before it was stored"),
  number: nullable(string('The authorization number', { pattern: '^[A-Za-z0-9-]{1,50}$' })),
  decisionDate: nullable(string('The decision date', { format: 'date' })),
} satisfies Members<PortalAuthorizationRecord>;

const requestAuthorization = {
  status: oneOf(
    AUTHORIZATION_STATUSES,
    "not_submitted until the automation read a status (the portal's pended is pending)",
  ),
  number: nullable(string('The authorization number', { pattern: '^[A-Za-z0-9-]{1,50}$' })),
  decisionDate: nullable(string('The decision date', { format: 'date' })),
  lastCheckedAt: nullable(timestamp("When the automation last read it on the payer's portal or API")),
  channel: nullable(oneOf(['pas', 'portal'], "Which channel last read it: the payer's PAS API or its portal")),
  items: {
    type: 'array',
    maxItems: DECISION_LIMITS.items,
    description: "Per requested service, as the payer's API decided it (empty when the portal read the status)",
    items: ref('AuthorizationItem'),
  },
  reasons: {
    type: 'array',
    maxItems: DECISION_LIMITS.reasons,
    description: "The payer's denial reasons and notes (the payer-API channel)",
    items: ref('AuthorizationReason'),
  },
  decisionDueAt: nullable(
    timestamp(
      'When the payer owes its decision: 72 hours (urgent) or 7 × 24 hours after the PAS submission was sent; null when the payer is not held to those timeframes or the request went through the portal',
    ),
  ),
  informationRequested: nullable(ref('InformationRequested')),
} satisfies Members<Authorization>;

const authorizationReason = {
  system: nullable(string('The code system (X12 HCR reason codes on PAS)', { maxLength: 200 })),
  code: string('The reason code', { minLength: 1, maxLength: 64 }),
  text: nullable(string("The payer's words", { maxLength: 500 })),
} satisfies Members<AuthorizationReason>;

const authorizationItem = {
  sequence: {
    type: 'integer',
    minimum: 1,
    description: "The item's sequence: the request's procedure at sequence − 1",
  },
  serviceCode: nullable({
    type: 'object',
    additionalProperties: false,
    required: ['system', 'code'],
    properties: {
      system: nullable(string('The code system (CPT, HCPCS, …)', { maxLength: 200 })),
      code: string('The service code', { minLength: 1, maxLength: 64 }),
    },
  }),
  status: oneOf(['approved', 'partially_approved', 'denied', 'pending', 'cancelled'], "The payer's decision on it"),
  reviewActionCode: nullable(string('The X12 306 review action code it was read from', { maxLength: 8 })),
  number: nullable(string("The item's authorization number", { pattern: '^[A-Za-z0-9-]{1,50}$' })),
  authorizedPeriod: nullable({
    type: 'object',
    additionalProperties: false,
    required: ['start', 'end'],
    properties: {
      start: nullable(string('First day', { format: 'date' })),
      end: nullable(string('Last day', { format: 'date' })),
    },
  }),
  authorizedQuantity: nullable({
    type: 'object',
    additionalProperties: false,
    required: ['value', 'unit'],
    properties: { value: { type: 'number', minimum: 0 }, unit: nullable(string('The unit', { maxLength: 20 })) },
  }),
  reasons: { type: 'array', maxItems: DECISION_LIMITS.itemReasons, items: ref('AuthorizationReason') },
} satisfies Members<AuthorizationItem>;

const screenshot = {
  n: { type: 'integer', minimum: 1, description: "Its place among the run's screenshots, from 1" },
  label: oneOf(SCREENSHOT_LABELS, 'What it shows'),
  capturedAt: timestamp('When it was taken'),
} satisfies Members<RunView['screenshots'][number]>;

const sessionScreenshot = {
  ...screenshot,
  url: string(`A presigned GET URL of the PNG, valid ${SCREENSHOT_URL_SECONDS} seconds`, { format: 'uri' }),
  urlExpiresAt: timestamp('When the URL stops working'),
} satisfies Members<ScraperSession['runs'][number]['screenshots'][number]>;

/** A run's members, with its screenshots as the run or the session shows them. */
const runMembers = (screenshotSchema: string) =>
  ({
    runId: uuid('A UUIDv7: run ids sort by creation time'),
    requestExternalId: identifier('The request it automates'),
    kind: oneOf(
      RUN_KINDS,
      "view-on-page fills the portal's form; check-auth-status reads the status (one run per request of a batch)",
    ),
    batchId: nullable(uuid('The check-auth-status batch it belongs to')),
    clientUserId: identifier('On whose behalf it runs'),
    portalAccountId: nullable(identifier('The portal account chosen at the start (externalId)')),
    portalId: nullable(oneOf(PORTAL_IDS, 'The portal of that account')),
    channel: oneOf(['portal', 'pas'], 'How the run reaches the payer: its portal (a browser), or its PAS API'),
    payerConnectionId: nullable(
      identifier('The payer connection chosen at the start (externalId), for the pas channel'),
    ),
    status: oneOf(RUN_STATUSES, 'queued, then running, then succeeded or failed (its outcome says why)'),
    outcome: nullable(
      oneOf(
        RUN_OUTCOMES,
        'Why it ended as it did (docs/rpa.md, "Named outcomes"); null until it ended, and for a run whose execution never started',
      ),
    ),
    steps: {
      type: 'array',
      maxItems: MAX_RUN_STEPS,
      description: `What it did, oldest first: the first ${MAX_RUN_STEPS - 1} and always the latest`,
      items: ref('RunStep'),
    },
    enteredValues: {
      type: 'object',
      description:
        "Per field of the portal's form the automation filled (the portal's field names, in the form's order)",
      maxProperties: MAX_ENTERED_FIELDS,
      propertyNames: { type: 'string', maxLength: MAX_FIELD_NAME },
      additionalProperties: ref('EnteredValue'),
    },
    screenshots: { type: 'array', items: ref(screenshotSchema) },
    authorization: nullable(ref('PortalAuthorization')),
    executionId: nullable(
      executionArn(
        "The Step Functions execution's ARN (a batch's runs: the batch's, though the scraper session shows null for them); null before it started",
      ),
    ),
    createdAt: timestamp('When it was queued'),
    updatedAt: timestamp('When it last changed'),
    version: { type: 'integer', minimum: 1, description: 'Counts its writes' },
  }) satisfies Members<RunView>;

const batchItem = {
  requestExternalId: identifier('The request'),
  runId: uuid('Its run (GET …/{requestExternalId}/rpa/runs/{runId})'),
  status: oneOf(RUN_STATUSES, "The run's; queued if the run cannot be read"),
  outcome: nullable(oneOf(RUN_OUTCOMES, 'null until the run ended')),
  authorization: nullable(ref('PortalAuthorization')),
} satisfies Members<BatchProgress['items'][number]>;

const batchProgress = {
  batchId: uuid('The batch'),
  status: oneOf(BATCH_STATUSES, "done once the batch's execution closed it (or ended without closing it)"),
  total: { type: 'integer', minimum: 1, maximum: MAX_BATCH_ITEMS, description: 'Its requests' },
  done: { type: 'integer', minimum: 0, maximum: MAX_BATCH_ITEMS, description: 'Items whose run ended, either way' },
  failed: { type: 'integer', minimum: 0, maximum: MAX_BATCH_ITEMS, description: 'Items whose run failed' },
  executionId: nullable(executionArn("The batch's execution's ARN; null before it started")),
  createdAt: timestamp('When it was started'),
  finishedAt: nullable(timestamp('When it was closed')),
  items: {
    type: 'array',
    minItems: 1,
    maxItems: MAX_BATCH_ITEMS,
    description: 'One per request, in the order sent',
    items: ref('BatchItemProgress'),
  },
} satisfies Members<BatchProgress>;

const scraperSession = {
  requestExternalId: identifier('The request the token opens'),
  clientUserId: identifier('On whose behalf the token was issued'),
  tokenExpiresAt: timestamp('When the token that opened this session expires'),
  authorization: ref('RequestAuthorization'),
  authorizationHistory: {
    type: 'array',
    maxItems: SESSION_HISTORY,
    description: `The ${SESSION_HISTORY} latest changes of the request's authorization, newest first (the whole history: GET …/Requests/{externalId}/authorization/history); the request's, so an organization's token sees them all`,
    items: ref('AuthorizationChange'),
  },
  runs: {
    type: 'array',
    maxItems: SESSION_RUNS,
    description: `The request's ${SESSION_RUNS} latest runs, newest first (an organization's token: that organization's only)`,
    items: ref('ScraperSessionRun'),
  },
} satisfies Members<ScraperSession>;

export const rpaSchemas: Record<string, JsonSchema> = {
  ...rpaStartSchemas,
  RpaAccessToken: closed(
    'RpaAccessToken',
    `A ${SCRAPER_TOKEN_TTL_SECONDS / 60}-minute scraper token for one request and client user`,
    {
      accessToken: string('The scraper token (a JWT): Authorization: Bearer, or a ?token= link', {
        pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
      }),
      scraperUri: string("The scraper session's absolute URL; holds no secret (a browser opens it with ?token=)", {
        format: 'uri',
      }),
    },
  ),
  Run: closed(
    'Run',
    "An automation run: status, outcome, steps, values entered, screenshots' metadata (docs/rpa.md)",
    runMembers('RunScreenshot'),
  ),
  RunStep: closed('RunStep', 'One step of a run', runStep, ['detail']),
  EnteredValue: closed('EnteredValue', "One field of the portal's form as the automation filled it", enteredValue),
  RunScreenshot: closed(
    'RunScreenshot',
    "A screenshot's metadata: the image only through the scraper session",
    screenshot,
  ),
  PortalAuthorization: closed(
    'PortalAuthorization',
    'What the portal said of the authorization (not_found: neither number nor date)',
    portalAuthorization,
  ),
  BatchProgress: closed('BatchProgress', "A check-auth-status batch's progress", batchProgress),
  BatchItemProgress: closed('BatchItemProgress', 'One request of a batch and its run', batchItem),
  ScraperSession: closed(
    'ScraperSession',
    "What a scraper token opens: the request's authorization with its latest changes, and its latest runs with short-lived screenshot URLs",
    scraperSession,
  ),
  ScraperSessionRun: closed(
    'ScraperSessionRun',
    'A run as the scraper session shows it: its screenshots with URLs',
    runMembers('ScraperSessionScreenshot'),
  ),
  ScraperSessionScreenshot: closed('ScraperSessionScreenshot', 'A screenshot and where to read it', sessionScreenshot),
  RequestAuthorization: closed(
    'RequestAuthorization',
    "The request's authorization: what the automation last read on the payer's portal or API",
    requestAuthorization,
  ),
  SubmissionDryRun: closed('SubmissionDryRun', 'What a submission would send, and what stands in its way', {
    bundle: {
      type: 'object',
      description:
        'The Da Vinci PAS Request Bundle (FHIR R4 Bundle, type collection, the Claim first) built from the stored request',
      required: ['resourceType'],
      properties: { resourceType: { const: 'Bundle' } },
    },
    problems: { type: 'array', items: ref('MappingProblem'), description: 'Empty when the request can be submitted' },
  }),
  MappingProblem: closed('MappingProblem', 'A field PAS cannot do without, missing or not mappable', {
    path: string('Where in the request (JSON Pointer), e.g. /patient/memberId or /procedures/1/code', {
      maxLength: 200,
    }),
    reason: oneOf(['missing', 'unmappable'], 'Missing, or present but not mappable to what PAS binds'),
    message: string('Our words, naming the field and the rule; never a value of the request', { maxLength: 500 }),
  }),
  AuthorizationItem: closed('AuthorizationItem', 'One requested service as the payer decided it', authorizationItem),
  AuthorizationReason: closed('AuthorizationReason', "A payer's reason for a decision", authorizationReason),
  InformationRequested: informationRequestedSchema,
};
