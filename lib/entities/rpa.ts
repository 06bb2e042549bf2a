import { attr, defineEntity } from './define-entity.ts';
import { requestEntity } from './request.ts';

/**
 * A stored `enteredValues` as the domain reads it. Runs recorded before read-back was checked hold
 * `{field: "what the page held"}`: each such string reads as `{value, readBack: null}`. Anything else
 * that is not `{value: string, readBack: boolean | null}` is left out.
 */
export const enteredValuesFromStored = (stored: unknown): EnteredValues => {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return {};
  const values: [string, EnteredValue][] = [];
  for (const [field, entry] of Object.entries(stored)) {
    if (typeof entry === 'string') {
      values.push([field, { value: entry, readBack: null }]);
      continue;
    }
    const { value, readBack } = (entry ?? {}) as { value?: unknown; readBack?: unknown };
    if (typeof value === 'string' && (typeof readBack === 'boolean' || readBack === null)) {
      values.push([field, { value, readBack }]);
    }
  }
  // fromEntries defines each field as a property of its own, even one named __proto__.
  return Object.fromEntries(values);
};

/** A portal account's lease, as portalAccountLeaseEntity stores it (the port: lib/portal/account-lease.ts). */
export interface PortalAccountLease {
  clientId: string;
  portalAccountId: string;
  /** Who holds it: the run (view-on-page) or the batch's group of runs. */
  holder: string;
  expiresAt: string;
  /** Epoch seconds, for DynamoDB's TTL. */
  expiration: number;
  /** Every take is a new lease: version 1, created when taken. */
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * The records of automation runs and check-auth-status batches (the port: lib/runs/run-store.ts). A
 * `submit` run sends a request to the payer's prior-authorization API (docs/payer-api.md).
 */
export type RunKind = 'view-on-page' | 'check-auth-status' | 'submit';

/** The way a run reaches the payer: its portal (a browser), or its FHIR PAS API. */
const RUN_CHANNELS = ['portal', 'pas'] as const;
export type RunChannel = (typeof RUN_CHANNELS)[number];

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** The named outcomes of docs/rpa.md; each says why a run ended as it did. */
export const RUN_OUTCOMES = [
  'form_filled',
  'status_read',
  'not_found_on_portal',
  'wrong_password',
  'account_locked',
  'mfa_required',
  'no_portal_account',
  'account_needs_attention',
  'portal_account_busy',
  'portal_timeout',
  'request_not_found',
  'browser_failed',
  'portal_error',
  'browser_busy',
  'execution_timed_out',
  'execution_aborted',
  'execution_lost',
  'credentials_refused',
  'unexpected_origin',
  /** The payer's API took the submission and answered it; the request's authorization is updated. */
  'submitted',
  /** The payer's API refused the submission or inquiry (an OperationOutcome or an error outcome). */
  'payer_refused',
  /** The payer's API did not answer in time or kept answering 429/5xx through every retry. */
  'payer_unavailable',
  /** The payer's API answered in a way we cannot read (too large, too deep, not a PAS answer). */
  'payer_error',
  /** The payer's API does not know the request ($inquire found no claim). */
  'not_found_at_payer',
  /** The run's payer connection is gone, disabled or needs attention, or its payer has no API endpoint any more. */
  'no_payer_connection',
  /** The request lacks a field PAS cannot do without, or has one that cannot be mapped (changed since the start). */
  'request_not_mappable',
] as const;

export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export interface RunStep {
  at: string;
  /** A short fixed text of ours (never a portal's or an error's message: they can quote PHI or secrets). */
  step: string;
  detail?: string;
}

export interface RunScreenshot {
  /** `<clientId>/rpa/<runId>/<n>.png` (lib/object-keys.ts). */
  objectKey: string;
  label: string;
  capturedAt: string;
}

/**
 * One field of a portal's form after filling (docs/rpa.md, "Data"): the value we typed or selected
 * (the request's, never the page's text), and whether the page's field held exactly that afterwards.
 */
export interface EnteredValue {
  value: string;
  /** null: a run recorded before read-back was checked; its value is what the page held. */
  readBack: boolean | null;
}

/** By the portal's field names, in the form's order. */
export type EnteredValues = Record<string, EnteredValue>;

/** What the portal said about the authorization. */
export interface PortalAuthorizationRecord {
  status: 'approved' | 'partially_approved' | 'denied' | 'pended' | 'not_found';
  number: string | null;
  decisionDate: string | null;
}

/** A `submit` run's submission: its Bundle identifier (one per run, kept by every retry), when it was last sent. */
export interface PayerSubmissionRecord {
  bundleIdentifier: string;
  /** Set before each send: a run found with it set and no answer recorded is reconciled by $inquire first. */
  sentAt: string | null;
  /** What the bundle is: a first claim, an update of a sent claim, or its cancel. Absent: `claim`. */
  action?: 'claim' | 'update' | 'cancel';
  /** An update's or a cancel's: the claim identifier of the latest sent submission it replaces. */
  relatedClaimIdentifier?: string;
}

/** One automation run on one request, in the request's item collection. */
export interface RpaRunRecord {
  clientId: string;
  /** The request's externalId. */
  externalId: string;
  /** A UUIDv7: runs sort by creation time within their request. */
  runId: string;
  kind: RunKind;
  batchId?: string;
  clientUserId: string;
  organizationId: string;
  portalAccountId?: string;
  portalId?: string;
  /** Absent on runs recorded before the payer-API channel: those went through the portal. */
  channel?: RunChannel;
  /** The organization's payer connection the run goes through (the payer-API channel). */
  payerConnectionId?: string;
  /** A submission to the payer's API: what makes a retried or re-sent $submit the same submission. */
  submission?: PayerSubmissionRecord;
  /** Calls to the payer's API that found it unavailable (timeout, 429, 5xx): the back-off counts them. */
  payerAttempts?: number;
  status: RunStatus;
  outcome?: RunOutcome;
  /** At most MAX_RUN_STEPS. */
  steps: RunStep[];
  /** What was typed into the portal's form, field by field (PHI). */
  enteredValues: EnteredValues;
  screenshots: RunScreenshot[];
  authorization?: PortalAuthorizationRecord;
  /** A view-on-page run's execution; a batch's runs share the batch's (on the batch). */
  executionArn?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export type BatchStatus = 'running' | 'done';

export interface BatchItem {
  requestExternalId: string;
  runId: string;
}

/** A check-auth-status batch: which run checks which request. */
export interface RpaBatchRecord {
  clientId: string;
  batchId: string;
  clientUserId: string;
  organizationId: string;
  /** In the order the client sent them; at most MAX_BATCH_ITEMS. */
  items: BatchItem[];
  status: BatchStatus;
  executionArn?: string;
  finishedAt?: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * An automation run, in its request's item collection: the scraper session lists a request's latest
 * runs with one Query, newest first, because run ids are UUIDv7 (time-ordered).
 */
export const rpaRunEntity = defineEntity<RpaRunRecord>()({
  name: 'RpaRun',
  keys: { pk: requestEntity.keys.pk.template, sk: 'RPA#<runId>' },
  attributes: {
    clientId: attr.string(),
    externalId: attr.string(),
    runId: attr.string(),
    kind: attr.string<RunKind>(),
    batchId: attr.optional(attr.string()),
    clientUserId: attr.string(),
    organizationId: attr.string(),
    portalAccountId: attr.optional(attr.string()),
    portalId: attr.optional(attr.string()),
    channel: attr.optional(attr.string<RunChannel>()),
    payerConnectionId: attr.optional(attr.string()),
    submission: attr.optional(attr.map<PayerSubmissionRecord>()),
    payerAttempts: attr.optional(attr.number()),
    status: attr.string<RunStatus>(),
    outcome: attr.optional(attr.string<RunOutcome>()),
    steps: attr.list<RunStep>(),
    // A JSON string: the fields keep the order the portal's form has them in. Runs recorded before
    // read-back was checked hold `{field: string}`: enteredValuesFromStored reads them as well.
    enteredValues: {
      ...attr.json<EnteredValues>(),
      read: (stored: string) => enteredValuesFromStored(JSON.parse(stored)),
    },
    screenshots: attr.list<RunScreenshot>(),
    authorization: attr.optional(attr.map<PortalAuthorizationRecord>()),
    executionArn: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/** A check-auth-status batch: its items name each request's run (at most 25). */
export const rpaBatchEntity = defineEntity<RpaBatchRecord>()({
  name: 'RpaBatch',
  keys: { pk: 'CLIENT#<clientId>#RPABATCH#<batchId>', sk: 'BATCH' },
  attributes: {
    clientId: attr.string(),
    batchId: attr.string(),
    clientUserId: attr.string(),
    organizationId: attr.string(),
    items: attr.list<BatchItem>(),
    status: attr.string<BatchStatus>(),
    executionArn: attr.optional(attr.string()),
    finishedAt: attr.optional(attr.string()),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});

/**
 * One automation login at a time per portal account: the lease, in the account's item collection
 * (docs/rpa.md, "No lockouts"). `expiration` lets DynamoDB's TTL sweep a lease a crashed worker left;
 * until it does, `expiresAt` already lets the next holder take it.
 */
export const portalAccountLeaseEntity = defineEntity<PortalAccountLease>()({
  name: 'PortalAccountLease',
  keys: { pk: 'CLIENT#<clientId>#PACC#<portalAccountId>', sk: 'LEASE' },
  attributes: {
    clientId: attr.string(),
    portalAccountId: attr.string(),
    holder: attr.string(),
    expiresAt: attr.string(),
    expiration: attr.number(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
