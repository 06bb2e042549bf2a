import type { StoredPortalAccount } from '#lib/entities/portal-account';
import type { RpaRunRecord, RunKind } from '#lib/entities/rpa';
import { log } from '#lib/observability/logger';
import type { PortalCredentials } from '#lib/portal-accounts/credentials';
import type { PortalAccountStore } from '#lib/portal-accounts/portal-account-store';
import { CredentialsRefused, type RefusalReason } from '#lib/runs/errors';
import type { ExecutionReader } from '#lib/runs/execution-reader';
import { changeRun, withStep } from '#lib/runs/run-changes';
import { isTerminal, type RunStore } from '#lib/runs/run-store';
import type { RunCredentialsRequest } from './credentials-source.ts';

/*
 * The run credentials function (IssueRunCredentials, docs/rpa.md): the one place portal secrets are
 * opened. A browser worker asks with ids only; the credentials go out only for a run that is live,
 * of a browser kind, on the account it recorded as selected (of its own organization), for its
 * current attempt, that a running execution started by the API names (the workers may write runs,
 * but cannot start executions), and once per attempt: the issue is a step written with the run's
 * conditional write before anything is decrypted, so a second ask for the same attempt finds it and
 * is refused. Refusals are CredentialsRefused with a fixed code; nothing secret is logged, stored or
 * thrown.
 */

/** The step that records an issue; its detail is `attempt <n>`. Fixed text, never a secret. */
export const CREDENTIALS_ISSUED_STEP = 'credentials issued';

/** Runs that drive a portal in the browser: the only ones that may log in. */
const BROWSER_RUN_KINDS: readonly RunKind[] = ['view-on-page', 'check-auth-status'];

/** Bounds of the ids a request may carry (the worker's own ids are far shorter). */
const MAX_ID_LENGTH = 256;
const MAX_ATTEMPT = 1000;

export interface RunCredentialsDependencies {
  runs: Pick<RunStore, 'getRun' | 'updateRun'>;
  accounts: Pick<PortalAccountStore, 'get'>;
  executions: ExecutionReader;
  /** lib/portal-accounts/open-credentials.ts: decrypts the account's sealed secrets. */
  open: (account: StoredPortalAccount) => Promise<PortalCredentials>;
  now?: () => Date;
}

/** What the function answers: the credentials, `totpSecret` only when the account has one. */
export interface IssuedCredentials {
  username: string;
  password: string;
  totpSecret?: string;
}

/** The ids and the attempt, as the worker sends them; undefined for anything else. */
const requestOf = (input: unknown): RunCredentialsRequest | undefined => {
  const record = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const { clientId, requestExternalId, runId, portalAccountId, attempt } = record;
  const ids = [clientId, requestExternalId, runId, portalAccountId];
  const idsValid = ids.every((id) => typeof id === 'string' && id !== '' && id.length <= MAX_ID_LENGTH);
  const attemptValid = typeof attempt === 'number' && Number.isSafeInteger(attempt) && attempt >= 1;
  if (!idsValid || !attemptValid || attempt > MAX_ATTEMPT) return undefined;
  return { clientId, requestExternalId, runId, portalAccountId, attempt } as RunCredentialsRequest;
};

/** The attempts a run has started: its `started` steps (the worker adds one per attempt). */
const attemptsOf = (run: RpaRunRecord) => run.steps.filter((step) => step.step === 'started').length;

const issuedFor = (run: RpaRunRecord, attempt: number) =>
  run.steps.some((step) => step.step === CREDENTIALS_ISSUED_STEP && step.detail === `attempt ${attempt}`);

/** Why this run may not have credentials for this attempt, if it may not. */
const refusalOf = (run: RpaRunRecord, request: RunCredentialsRequest, account: StoredPortalAccount | undefined) => {
  if (!BROWSER_RUN_KINDS.includes(run.kind)) return 'not_a_browser_run' as const;
  if (isTerminal(run.status)) return 'run_ended' as const;
  if (run.portalAccountId !== request.portalAccountId) return 'other_account' as const;
  if (!account || account.organizationId !== run.organizationId || account.portalId !== run.portalId) {
    return 'other_account' as const;
  }
  if (account.status !== 'active') return 'account_unusable' as const;
  if (request.attempt !== attemptsOf(run)) return 'not_current_attempt' as const;
  if (issuedFor(run, request.attempt)) return 'already_issued' as const;
  return undefined;
};

const inputOf = (text: string): Record<string, unknown> => {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/**
 * Whether a running execution the API started is this run's, on the run's account: a view-on-page
 * run's own (named after the run), or its batch's (named after the batch, the run in the group of its
 * account). The start fixed the account in the input, and only the API can start executions: a worker
 * that rewrites a run to name another account is refused.
 */
const inLiveExecution = async (executions: ExecutionReader, run: RpaRunRecord) => {
  if (run.kind === 'submit') return false;
  const name = run.kind === 'view-on-page' ? run.runId : run.batchId;
  const execution = name ? await executions.read(run.kind, name) : undefined;
  if (execution?.status !== 'RUNNING') return false;
  const input = inputOf(execution.input);
  if (input.clientId !== run.clientId || !run.portalAccountId) return false;
  if (run.kind === 'view-on-page') {
    return (
      input.requestExternalId === run.externalId &&
      input.runId === run.runId &&
      input.portalAccountId === run.portalAccountId
    );
  }
  const groups = Array.isArray(input.groups) ? (input.groups as Array<Record<string, unknown>>) : [];
  const group = groups.find((candidate) => candidate?.portalAccountId === run.portalAccountId);
  const items = Array.isArray(group?.items) ? (group.items as Array<Record<string, unknown>>) : [];
  return (
    input.batchId === run.batchId &&
    items.some((item) => item?.requestExternalId === run.externalId && item?.runId === run.runId)
  );
};

export const runCredentialsIssuer = (deps: RunCredentialsDependencies) => {
  const now = deps.now ?? (() => new Date());

  const refuse = (reason: RefusalReason, runId?: string): never => {
    log.warn('Run credentials refused', { runId, reason });
    throw new CredentialsRefused(reason);
  };

  return {
    /** IssueRunCredentials: the account's credentials for this run's current attempt, once. */
    issue: async (input: unknown): Promise<IssuedCredentials> => {
      const request = requestOf(input);
      if (!request) return refuse('invalid_input');
      const { clientId, requestExternalId, runId, portalAccountId, attempt } = request;
      const ref = { clientId, externalId: requestExternalId, runId };
      const [account, stored] = await Promise.all([
        deps.accounts.get(clientId, portalAccountId),
        deps.runs.getRun(ref),
      ]);
      if (!stored) return refuse('run_not_found', runId);
      const early = refusalOf(stored, request, account);
      if (early) return refuse(early, runId);
      if (!(await inLiveExecution(deps.executions, stored))) return refuse('no_live_execution', runId);
      // The checks again with the issue's conditional write: of two asks for one attempt, one records it.
      let refusal: RefusalReason | undefined;
      const recorded = await changeRun(
        deps.runs,
        ref,
        (run) => {
          refusal = refusalOf(run, request, account);
          if (refusal) return undefined;
          return {
            ...run,
            steps: withStep(run.steps, now().toISOString(), CREDENTIALS_ISSUED_STEP, `attempt ${attempt}`),
          };
        },
        now,
      );
      if (!recorded) return refuse('run_not_found', runId);
      if (refusal) return refuse(refusal, runId);
      const credentials = await deps.open(account!);
      log.info('Run credentials issued', { runId, attempt, portalAccountId });
      return {
        username: credentials.username,
        password: credentials.password,
        ...(credentials.totpSecret ? { totpSecret: credentials.totpSecret } : {}),
      };
    },
  };
};
