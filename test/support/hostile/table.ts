import type { Route } from '#lib/routes/route-table';
import { validRequest } from '#test/support/fixtures';
import { type Body, ID, type Step } from './json-body.ts';
import type { CaseIds, World } from './world.ts';

/**
 * The hostile-input suite (test/integration/hostile-input.test.ts) as two tables:
 * - `hostileFamilies`: each family of hostile input, the routes it is sent to, how many generated cases per
 *   route (fast-check; the generators are in body-cases.ts and wire-cases.ts) and what the answer must be;
 * - `hostileRoutes`: by handler id, what a route needs to be reached (a valid body to break, ids), the media
 *   types it takes (any other is a 415) and what a 2xx stores (read back and compared with what was sent).
 * Every route of the route table gets every family; one missing from `hostileRoutes` gets generic values.
 * On top of its family's expectation, every answer follows wire.ts's `checkAnswer`: never a 5xx, a 4xx is
 * problem details or a failed Validation result (400), no stack trace, no echo of long values or secrets,
 * `Cache-Control: no-store`. Sentinel data of the same tenant, never addressed, must be unchanged at the end.
 */

export type Family =
  | 'mutated bodies'
  | 'numbers'
  | 'prototype keys'
  | 'deep nesting'
  | 'thousands of errors'
  | 'raw bytes'
  | 'path ids'
  | 'headers and query'
  | 'oversized heads'
  | 'wrong methods'
  | 'content types';

/** Every body family's expectation: a 2xx is read back, and what the route stored must be exactly what was sent. */
const REFUSED_OR_STORED = '4xx, or 2xx and stored as sent';

export const MANY_ERRORS_BUDGET_MS = 5_000;

export interface FamilyRow {
  family: Family;
  /** What the family sends. */
  input: string;
  /** What the answer must be, beyond the rules every answer follows (above). */
  expect: string;
  /** Routes with a body: POST, PUT, PATCH. Every path: once per path, with every method its routes lack. */
  over: 'every route' | 'routes with a body' | 'every path';
  /**
   * Generated cases per route; routes that take no body get a few (whatever they are sent must be ignored
   * safely). None for wrong methods: each method a path's routes lack is sent once.
   */
  runs?: { withBody: number; withoutBody: number } | number;
}

/** The test group of a family: its row, as the report shows it. */
export const titleOf = ({ family, input, expect }: FamilyRow) => `${family}: ${input} → ${expect}`;

export const hostileFamilies: FamilyRow[] = [
  {
    family: 'mutated bodies',
    input: 'any member removed, replaced or added, with wrong types, odd strings, huge values',
    expect: REFUSED_OR_STORED,
    over: 'every route',
    runs: { withBody: 40, withoutBody: 3 },
  },
  {
    family: 'numbers',
    input: 'beyond a double (1e400, 41-digit integers), or written oddly',
    expect: REFUSED_OR_STORED,
    over: 'every route',
    runs: { withBody: 20, withoutBody: 3 },
  },
  {
    family: 'prototype keys',
    input: '__proto__, constructor, prototype members at any depth',
    expect: REFUSED_OR_STORED,
    over: 'every route',
    runs: { withBody: 25, withoutBody: 3 },
  },
  {
    family: 'deep nesting',
    input: '33 to 10,000 levels of arrays or objects',
    expect: REFUSED_OR_STORED,
    over: 'every route',
    runs: { withBody: 8, withoutBody: 3 },
  },
  {
    family: 'thousands of errors',
    input: 'thousands of schema errors in one body',
    expect: `${REFUSED_OR_STORED}, answered within ${MANY_ERRORS_BUDGET_MS / 1000} s`,
    over: 'routes with a body',
    // Plus the largest case, tried first (body-cases.ts mostErrors).
    runs: 4,
  },
  {
    family: 'raw bytes',
    input: 'invalid UTF-8, raw control characters, cut short, UTF-16',
    expect: `${REFUSED_OR_STORED} (when still UTF-8)`,
    over: 'every route',
    runs: { withBody: 12, withoutBody: 3 },
  },
  {
    family: 'path ids',
    input: 'encoded slashes, traversal, malformed and overlong percent-encoding, very long ids',
    expect: REFUSED_OR_STORED,
    over: 'every route',
    runs: 20,
  },
  {
    family: 'headers and query',
    input: '__proto__ and other prototype names, duplicates, huge values',
    expect: 'names that mean nothing change no status (a 409 aside)',
    over: 'every route',
    runs: 10,
  },
  {
    family: 'oversized heads',
    input: 'request heads over the gateway limit (16 KiB)',
    expect: 'no 5xx, no echo of the long values',
    over: 'every route',
    runs: 2,
  },
  {
    family: 'wrong methods',
    input: 'every method the route table has not for a path',
    expect: '4xx, never served',
    over: 'every path',
  },
  {
    family: 'content types',
    input: 'wrong, missing, multipart without boundary',
    expect: `415 with "accepted" for a type a body route does not take; else ${REFUSED_OR_STORED}`,
    over: 'every route',
    runs: { withBody: 10, withoutBody: 3 },
  },
];

/* ------------------------------------------------------------------------------------------------
 * The routes.
 */

export type Stores = 'request' | 'request-patch' | 'portal-account' | 'payer-connection';

export interface RouteRow {
  /** A valid body, which the body families break; `ID` stands for the case's id. Body routes without one: `{}`. */
  body?: (world: World) => Body;
  /** Members of the body stored as sent (a wrong value there is kept, not refused): half the mutations go there. */
  freeForm?: Step[][];
  /** What a 2xx stores, to read back. */
  stores?: Stores;
  /** Media types of the body (lower case, no parameters); any other is a 415. Body routes: JSON only by default. */
  accepts?: string[];
  /** Values of path variables other than the suite's play data. */
  ids?: Record<string, (ids: CaseIds, world: World) => string>;
}

export const SECRET_PASSWORD = `hostile-Pa55word-${'s'.repeat(16)}`;

const JSON_ONLY = ['application/json'];

const request = (): Body => validRequest(ID) as unknown as Body;

/** The spec does not validate procedures: whatever is sent there is stored, and must read back unchanged. */
const UNVALIDATED: Step[][] = [['procedures']];

/** Objects at several levels: a merge patch recurses into each. */
const patch: Body = {
  quantity: 2,
  patient: { firstName: 'Bea', Payer: 'Other Plan' },
  subscriber: { firstName: 'Bea' },
  requestingProvider: { lastName: 'Doe' },
  renderingProviders: [{ roleCode: 'SJ', organizationName: 'Other Imaging' }],
  diagnoses: [{ qualifierCode: 'ABK', code: 'M54.4' }],
  procedures: [{ qualifierCode: 'HC', code: '72148', quantity: 2, note: 'hostile' }],
  serviceLevelCode: null,
};

const declaration: Body = {
  fileName: 'scan.pdf',
  contentType: 'application/pdf',
  size: 4096,
  sha256: 'ab'.repeat(32),
  documentType: 'Imaging',
  description: 'Hostile input',
};

const account = ({ clientUserId }: World): Body => ({
  externalId: ID,
  clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01', 'SBX02'],
  displayName: 'Hostile – main office',
  username: 'hostile@clinic.example',
  password: SECRET_PASSWORD,
  totpSecret: 'JBSWY3DPEHPK3PXP',
});

const connection = ({ clientUserId, payerId }: World): Body => ({
  externalId: ID,
  clientUserId,
  payerId,
  clientId: 'hostile-client-id',
  status: 'active',
});

const filter = ({ clientUserId }: World): Body => ({
  clientUserId,
  portalId: 'sandbox',
  status: 'active',
  search: 'clinic',
  pageSize: 10,
});

const fresh = (ids: CaseIds) => ids.fresh;
const uuid = (ids: CaseIds) => ids.uuid;

/**
 * Actions on a subscription that take no body: whatever is sent is ignored (docs/webhooks.md), so no media
 * type is refused; ids of ours, so a case reaches the handler (another client's: 404).
 */
const WEBHOOK_ACTION: RouteRow = { ids: { webhookId: uuid, deliveryId: uuid }, accepts: [] };

/**
 * A payer's heartbeat (R4 Subscriptions Backport): the notification route's valid body. Sent to a subscription
 * id nobody has, a case reaches the lookup (404) once its body passed, never a subscription.
 */
const heartbeat = (): Body => ({
  resourceType: 'Bundle',
  type: 'history',
  entry: [
    {
      fullUrl: 'urn:uuid:4f7c8b1e-0c8e-4b4a-9d7e-2f1a1b2c3d4e',
      resource: {
        resourceType: 'Parameters',
        parameter: [
          { name: 'subscription', valueReference: { reference: 'Subscription/hostile' } },
          { name: 'status', valueCode: 'active' },
          { name: 'type', valueCode: 'heartbeat' },
          { name: 'events-since-subscription-start', valueString: '0' },
        ],
      },
    },
  ],
});

export const hostileRoutes: { [handler in Route['handler']]?: RouteRow } = {
  'requests/create-request': { body: request, freeForm: UNVALIDATED, stores: 'request' },
  'requests/upsert-request-v1': {
    body: request,
    freeForm: UNVALIDATED,
    stores: 'request',
    ids: { appointmentId: fresh },
  },
  'requests/replace-request': { body: request, freeForm: UNVALIDATED, stores: 'request' },
  // No free-form members: a merge patch applies its members through every object, validated or not.
  'requests/patch-request-v1': {
    body: () => patch,
    stores: 'request-patch',
    accepts: [...JSON_ONLY, 'application/merge-patch+json'],
  },
  'attachments/create-attachment': { body: () => declaration, accepts: [...JSON_ONLY, 'multipart/form-data'] },
  'attachments/delete-attachment': { ids: { attachmentId: uuid } },
  'webhooks/rotate-webhook-secret': WEBHOOK_ACTION,
  'webhooks/test-webhook': WEBHOOK_ACTION,
  'webhooks/redeliver-webhook-delivery': WEBHOOK_ACTION,
  'portal-accounts/create-portal-account': { body: account, stores: 'portal-account' },
  'portal-accounts/replace-portal-account': { body: account, stores: 'portal-account' },
  'portal-accounts/delete-portal-account': { ids: { externalId: fresh } },
  'portal-accounts/list-portal-accounts': { ids: { externalId: (_, world) => encodeURIComponent(world.clientUserId) } },
  'portal-accounts/filter-portal-accounts': { body: filter },
  'payers/create-payer-connection': { body: connection, stores: 'payer-connection' },
  'payers/replace-payer-connection': { body: connection, stores: 'payer-connection' },
  'payers/delete-payer-connection': { ids: { externalId: fresh } },
  'payers/list-payer-connections': { ids: { externalId: (_, world) => encodeURIComponent(world.clientUserId) } },
  'schemas/validate-payload': { body: request },
  // A dry run of the play request, whose payer has no API (422 no_payer_api): a case breaks a valid body and
  // reaches the submission's checks; none can send anything to a payer.
  'requests/submit-request': { body: ({ clientUserId }) => ({ clientUserId, dryRun: true }) },
  // The play request was never submitted to a payer's API (422 not_submitted): a case reaches the cancel's checks,
  // none can send anything.
  'requests/cancel-request': { body: ({ clientUserId }) => ({ clientUserId }) },
  // Public: a well-formed id of a key set nobody has, so a case reaches the lookup (404), never a key set.
  'payers/get-payer-jwks': { ids: { keySetId: () => 'hostileKeySetId0000000' } },
  // Public: FHIR or plain JSON, to a subscription nobody has.
  'payers/receive-payer-notification': {
    body: heartbeat,
    accepts: [...JSON_ONLY, 'application/fhir+json'],
    ids: { subscriptionId: () => 'hostileSubscription0000' },
  },
};

/**
 * The notification route's own hostile cases, sent to a real subscription with its real channel secret
 * (test/integration/payer-notifications.test.ts builds each by its name): every one answered with its 4xx,
 * and nothing stored (the subscription's item and version, the requests' partitions, no run).
 */
export const hostileNotifications = [
  { name: 'oversize', input: 'a notification of 1 MiB and one byte', status: 413 },
  { name: 'deep JSON', input: 'a notification nested 40 levels deep', status: 400 },
  { name: 'replayed notification', input: 'an event whose number is not above the last one received', status: 409 },
  {
    name: "another connection's subscription id",
    input: "a body naming another connection's subscription than the one of its URL",
    status: 422,
  },
  { name: "another tenant's claim", input: 'an event naming a claim another client submitted', status: 422 },
] as const;

/** Body routes take JSON only unless their row says otherwise. */
export const DEFAULT_ACCEPTS = JSON_ONLY;
