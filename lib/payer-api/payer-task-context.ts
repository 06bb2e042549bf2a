import type { Resource } from '@medplum/fhirtypes';
import type { AttachmentSubmission, DecisionTimeframes, PayerSubscriptionChannel } from '#lib/entities/payer-endpoint';
import type { RpaRunRecord } from '#lib/entities/rpa';
import type { RecheckSettingsOf } from '#lib/rechecks/recheck-settings';
import type { RequestStore } from '#lib/requests/request-store';
import type { AutomationQuotaService } from '#lib/runs/automation-quotas';
import { stepOnRun } from '#lib/runs/run-changes';
import { finisherOf } from '#lib/runs/run-recorder';
import type { RunRef, RunStore } from '#lib/runs/run-store';
import { TIMEOUTS } from '#lib/runs/state-machines';
import type { PasAttachment } from './pas/mapping-context.ts';
import type { PayerMethod, PayerOperation } from './pas-transport.ts';

/*
 * What the payer-API channel's two tasks share (SubmitPasClaim, CheckPayerStatus): their dependencies
 * with defaults, and the steps they write on their runs. No browser, lease or portal: a PAS call is one
 * HTTPS request with a bearer token.
 */

/** What a task reads of its invocation (the Lambda context): the time it has left. */
export interface Invocation {
  getRemainingTimeInMillis(): number;
}

/** The organization's connection to a payer, as a task needs it. */
interface PayerConnectionView {
  payerId: string;
  status: 'active' | 'attention' | 'disabled';
}

/** A payer's FHIR endpoint, from the operator's directory. */
export interface PayerEndpointView {
  fhirBaseUrl: string;
  /** The payer's name in the directory: the Bundle's insurer when the request names none. */
  name: string | null;
  /** Whether its submissions get a decision deadline (lib/requests/decision-deadlines.ts). */
  decisionTimeframes: DecisionTimeframes;
  /** How requested documents go to it (lib/payer-api/cdex/); absent: in a claim update. */
  attachmentSubmission?: AttachmentSubmission;
  /** Whether a pended answer subscribes the connection (lib/payer-subscriptions/, docs/payer-api.md). */
  subscriptions: PayerSubscriptionChannel;
}

/**
 * One PAS call's result as the tasks read it (payer-gateway.ts makes it: a token from the signer, a 401
 * retried once with a new token, the answer bounded and parsed).
 */
export type PayerCallResult =
  | { kind: 'answer'; status: number; body: unknown }
  /**
   * No answer in time (`timedOut`: the payer took the call and never answered it), or 429/5xx or no
   * connection: worth another attempt later (the payer's Retry-After, if it gave one).
   */
  | { kind: 'unavailable'; retryAfterSeconds: number | null; timedOut?: true }
  /**
   * The payer's token endpoint refused our client assertion (the token function marked the connection
   * `attention`), or its API refused a fresh token too (`refusedByApi`: the task marks it).
   */
  | { kind: 'credentials_refused'; refusedByApi?: true }
  /** The connection or its payer's endpoint is gone, disabled or needs attention since the run started. */
  | { kind: 'no_payer_connection' }
  /** An answer we will not read: too large, too deep, not JSON. */
  | { kind: 'answer_rejected' };

export interface PayerCall {
  clientId: string;
  payerConnectionId: string;
  endpoint: PayerEndpointView;
  operation: PayerOperation;
  /** POST unless said. */
  method?: PayerMethod;
  /** What is sent: the PAS Bundle, the CDex Parameters of `$submit-attachment`, or the Subscription; none for a GET or DELETE. */
  bundle?: Resource;
  /** How long the payer has to answer, when less than PAS's 15 s (the task's end is nearer). */
  timeoutMs?: number;
}

export interface PayerTaskDependencies {
  runs: RunStore;
  requests: Pick<RequestStore, 'get' | 'setAuthorization'>;
  connectionOf: (clientId: string, externalId: string) => Promise<PayerConnectionView | undefined>;
  /** The payer's API refused a fresh token: the connection needs its owner (as a wrong portal password does). */
  markAttention: (clientId: string, externalId: string) => Promise<void>;
  endpointOf: (payerId: string) => Promise<PayerEndpointView | undefined>;
  /** The request's attachments, as the Bundle carries them (supportingInfo). */
  attachmentsOf: (clientId: string, externalId: string) => Promise<PasAttachment[]>;
  call: (call: PayerCall) => Promise<PayerCallResult>;
  /** A client's re-check settings: a read that finds the authorization undecided schedules re-checks. */
  recheckSettings?: RecheckSettingsOf;
  /**
   * After a pended answer read through a connection: its PAS subscription made, unless it has one
   * (lib/payer-subscriptions/subscription-creation.ts); absent: none is made.
   */
  subscribe?: (owner: { clientId: string; organizationId: string; payerConnectionId: string }) => Promise<unknown>;
  /** The client's runs in flight (automation-quotas.ts): a submit run that ends lands. */
  flights?: Pick<AutomationQuotaService, 'landed'>;
  /** Attempts at a payer that stays unavailable, per run, before the run ends `payer_unavailable`. */
  maxAttempts?: number;
  /** The payer Tasks' timeout (TIMEOUTS.payerTask): no inquiry runs past it (lib/runs/task-time.ts). */
  taskTimeoutSeconds?: number;
  now?: () => Date;
}

export type PayerTaskContext = Omit<Required<PayerTaskDependencies>, 'recheckSettings' | 'flights' | 'subscribe'> &
  Pick<PayerTaskDependencies, 'recheckSettings' | 'flights' | 'subscribe'> & {
    finish: ReturnType<typeof finisherOf>;
    /** A step of a run still going; called as a method, so the step texts read as they are written. */
    addStep: (
      ref: RunRef,
      step: string,
      detail?: string,
      change?: Partial<RpaRunRecord>,
    ) => Promise<RpaRunRecord | undefined>;
  };

/** Four attempts: the first and three retries spaced by the back-off (payer-back-off.ts), about 2 minutes in all. */
const MAX_ATTEMPTS = 4;

export function payerTaskContextOf(deps: PayerTaskDependencies): PayerTaskContext {
  const now = deps.now ?? (() => new Date());
  const ctx: PayerTaskContext = {
    ...deps,
    now,
    maxAttempts: deps.maxAttempts ?? MAX_ATTEMPTS,
    taskTimeoutSeconds: deps.taskTimeoutSeconds ?? TIMEOUTS.payerTask,
    finish: finisherOf({ runs: deps.runs, now, ...(deps.flights ? { flights: deps.flights } : {}) }),
    addStep: (ref, step, detail, change) => stepOnRun(ctx.runs, now, ref, step, detail, change),
  };
  return ctx;
}
