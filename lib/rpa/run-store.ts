import type { ServiceEvent } from '#lib/events/service-event';

/** Port: automation runs and check-auth-status batches (docs/rpa.md, "Data"). */
export type RunKind = 'view-on-page' | 'check-auth-status';
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
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

/** The outcomes of a run that ends `succeeded`; every other one fails it. */
export const SUCCESSFUL_OUTCOMES: readonly RunOutcome[] = ['form_filled', 'status_read', 'not_found_on_portal'];

export const isTerminal = (status: RunStatus) => status === 'succeeded' || status === 'failed';

export interface RunStep {
  at: string;
  /** A short fixed text of ours (never a portal's or an error's message: they can quote PHI or secrets). */
  step: string;
  detail?: string;
}

export interface RunScreenshot {
  /** `<clientId>/rpa/<runId>/<n>.png` (lib/keys.ts). */
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

export interface RunRef {
  clientId: string;
  externalId: string;
  runId: string;
}

export interface RunStore {
  getRun(ref: RunRef): Promise<RpaRunRecord | undefined>;
  /** The request's latest runs, newest first. */
  latestRuns(clientId: string, externalId: string, limit: number): Promise<RpaRunRecord[]>;
  /** The runs these refs name (of one client), in no particular order; missing ones are left out. At most 100. */
  getRuns(clientId: string, refs: ReadonlyArray<Omit<RunRef, 'clientId'>>): Promise<RpaRunRecord[]>;
  /** Writes version 1; throws VersionConflict when the run exists. */
  createRun(run: RpaRunRecord): Promise<void>;
  /**
   * Writes `run` if the stored version is still `run.version - 1`; else throws VersionConflict. The
   * events the write makes happen (a run that finished) go to the outbox in the same transaction.
   */
  updateRun(run: RpaRunRecord, events?: readonly ServiceEvent[]): Promise<void>;

  getBatch(clientId: string, batchId: string): Promise<RpaBatchRecord | undefined>;
  createBatch(batch: RpaBatchRecord): Promise<void>;
  /** As updateRun, for a batch (and the event of one that finished). */
  updateBatch(batch: RpaBatchRecord, events?: readonly ServiceEvent[]): Promise<void>;
}
