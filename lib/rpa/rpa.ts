import { randomUUID } from 'node:crypto';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import type { Authorization, StoredRequest } from '#lib/entities/request';
import type {
  BatchItem,
  EnteredValues,
  PortalAuthorizationRecord,
  RpaBatchRecord,
  RpaRunRecord,
  RunKind,
  RunOutcome,
  RunStatus,
  RunStep,
} from '#lib/entities/rpa';
import { DomainError, Invalid, NotFound, Unprocessable } from '#lib/errors';
import { uuidv7 } from '#lib/ids';
import { log } from '#lib/observability/logger';
import type { PortalAccountStore } from '#lib/portal-accounts/portal-account-store';
import { type AuthorizationHistoryEntry, historyEntryOf } from '#lib/requests/authorization-history';
import type { AuthorizationHistoryStore } from '#lib/requests/authorization-history-store';
import type { RequestStore } from '#lib/requests/request-store';
import { apiKeyState } from '#lib/tenancy/api-keys';
import { clientUserInScope, reaches, type Scope } from '#lib/tenancy/scope';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import { MAX_BATCH_REQUESTS } from '#lib/validation/schemas/rpa';
import type { AutomationQuotaService } from './automation-quotas.ts';
import type { AutomationStarter } from './automation-starter.ts';
import { outcomeOfExecution, runEnder } from './execution-ended.ts';
import { choosePortalAccount, NoPortalAccount } from './portal-account-choice.ts';
import { isTerminal, type RunStore } from './run-store.ts';
import { changeBatch, changeRun, withStep } from './runs.ts';
import { InvalidScraperToken, type ScraperClaims, type ScraperTokens } from './scraper-token.ts';
import type { ScreenshotStorage } from './screenshot-storage.ts';
import { TIMEOUTS } from './state-machines.ts';

/**
 * The automation's API use cases (docs/rpa.md), independent of HTTP and of AWS: scraper tokens and
 * the scraper session, starting view-on-page runs and check-auth-status batches, reading them. The
 * executions themselves run in the worker (worker.ts). An organization-restricted key
 * (#lib/tenancy/scope) reaches only its organization's client users, runs and batches: others are 404.
 */

/** A batch checks 1 to 25 requests (its schema's bound; the state machine's Map runs 2 at a time). */
export const MAX_BATCH_ITEMS = MAX_BATCH_REQUESTS;
/** The scraper session shows the request's latest runs, newest first. */
export const SESSION_RUNS = 10;
/** …and the latest changes of its authorization, newest first. */
export const SESSION_HISTORY = 10;
/** Presigned screenshot URLs of the session live this long (the page refreshes every 5 s while a run is active). */
export const SCREENSHOT_URL_SECONDS = 60;
/**
 * A run (or batch) whose execution cannot be found is lost only once it is this old: DescribeExecution
 * may not see an execution in the moment after StartExecution returned it.
 */
export const LOST_AFTER_MS = 60_000;

/** Some requests of a batch do not exist (or are another client's): nothing was started. */
export class RequestsNotFound extends DomainError {
  readonly kind = 'not-found';
  constructor(readonly requestExternalIds: string[]) {
    super(`Requests not found: ${requestExternalIds.join(', ')}. No check was started.`, { requestExternalIds });
  }
}

/** Some requests of a batch cannot be automated: no account can be chosen for them; nothing was started. */
export class RequestsNotAutomatable extends Unprocessable {
  constructor(readonly refused: NoPortalAccount[]) {
    super(
      `No portal account can be chosen for ${refused.length === 1 ? 'request' : 'requests'} ${refused
        .map((error) => error.requestExternalId)
        .join(', ')}. No check was started.`,
      { requests: refused.map(({ requestExternalId, reason }) => ({ requestExternalId, reason })) },
    );
  }
}

/** A run as the client (and a token holder) reads it. */
export interface RunView {
  runId: string;
  requestExternalId: string;
  kind: RunKind;
  batchId: string | null;
  clientUserId: string;
  portalAccountId: string | null;
  portalId: string | null;
  status: RunStatus;
  outcome: RunOutcome | null;
  steps: RunStep[];
  enteredValues: EnteredValues;
  screenshots: Array<{ n: number; label: string; capturedAt: string }>;
  authorization: PortalAuthorizationRecord | null;
  executionId: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export const runViewOf = (run: RpaRunRecord, executionArn = run.executionArn): RunView => ({
  runId: run.runId,
  requestExternalId: run.externalId,
  kind: run.kind,
  batchId: run.batchId ?? null,
  clientUserId: run.clientUserId,
  portalAccountId: run.portalAccountId ?? null,
  portalId: run.portalId ?? null,
  status: run.status,
  outcome: run.outcome ?? null,
  steps: run.steps,
  enteredValues: run.enteredValues,
  screenshots: run.screenshots.map(({ label, capturedAt }, i) => ({ n: i + 1, label, capturedAt })),
  authorization: run.authorization ?? null,
  executionId: executionArn ?? null,
  createdAt: run.createdAt,
  updatedAt: run.updatedAt,
  version: run.version,
});

export interface BatchProgress {
  batchId: string;
  status: 'running' | 'done';
  total: number;
  /** Items whose run has ended, either way. */
  done: number;
  failed: number;
  executionId: string | null;
  createdAt: string;
  finishedAt: string | null;
  items: Array<{
    requestExternalId: string;
    runId: string;
    status: RunStatus;
    outcome: RunOutcome | null;
    authorization: PortalAuthorizationRecord | null;
  }>;
}

export interface ScraperSession {
  requestExternalId: string;
  clientUserId: string;
  /** When the token that opened this session expires. */
  tokenExpiresAt: string;
  /** The request's authorization as stored (the latest status check's result). */
  authorization: Authorization;
  /** Its latest changes, newest first: the request's, whichever organization's run read them. */
  authorizationHistory: AuthorizationHistoryEntry[];
  runs: Array<
    Omit<RunView, 'screenshots'> & {
      screenshots: Array<{ n: number; label: string; capturedAt: string; url: string; urlExpiresAt: string }>;
    }
  >;
}

/** What a start's body says: on whose behalf, and optionally which portal account. */
export interface StartBody {
  clientUserId: string;
  portalAccountExternalId?: string | undefined;
}

export interface RpaDependencies {
  runs: RunStore;
  requests: Pick<RequestStore, 'get'>;
  accounts: Pick<PortalAccountStore, 'get' | 'page'>;
  /** Whether the automation drives a portal (lib/rpa/automated-portals.ts). */
  automated: (portalId: string) => boolean;
  tenants: Pick<TenantStore, 'getClientUser' | 'getApiKeyById'>;
  automation: AutomationStarter;
  /** Per-client run quotas and runs in flight (automation-quotas.ts). */
  quotas: Pick<AutomationQuotaService, 'admit'>;
  screenshots: Pick<ScreenshotStorage, 'presignGet'>;
  /** The requests' authorization histories, for the scraper session. */
  history: Pick<AuthorizationHistoryStore, 'page'>;
  tokens: ScraperTokens;
  now?: () => Date;
}

/** A batch's runs by portal account, in the order the accounts first appear: one session per group. */
export const groupsByAccount = (queued: readonly RpaRunRecord[]) => {
  const groups = new Map<string, BatchItem[]>();
  for (const run of queued) {
    const account = run.portalAccountId ?? '';
    groups.set(account, [...(groups.get(account) ?? []), { requestExternalId: run.externalId, runId: run.runId }]);
  }
  return [...groups].map(([portalAccountId, items]) => ({ portalAccountId, items }));
};

export const rpaService = ({
  runs,
  requests,
  accounts,
  automated,
  tenants,
  automation,
  quotas,
  screenshots,
  history,
  tokens,
  now = () => new Date(),
}: RpaDependencies) => {
  const timestamp = () => now().toISOString();

  const clientUser = (scope: Scope, clientUserId: string) => clientUserInScope(tenants, scope, clientUserId);

  const existingRequest = async (clientId: string, externalId: string) => {
    const request = await requests.get(clientId, externalId);
    if (!request) throw new NotFound(`Request ${externalId}`);
    return request;
  };

  const ender = runEnder({ runs, now });

  /**
   * The outcome an execution that ended (or is gone) without recording its runs leaves them with;
   * undefined while it runs, before it started (no ARN yet: StartExecution may be under way), or when
   * it cannot be described now (the stored state is shown then).
   */
  const endedExecutionOutcome = async (executionArn: string | undefined, createdAt: string) => {
    if (!executionArn) return undefined;
    let execution: Awaited<ReturnType<AutomationStarter['describe']>>;
    try {
      execution = await automation.describe(executionArn);
    } catch (error) {
      log.warn('The execution could not be described', { errorName: (error as Error).name });
      return undefined;
    }
    if (!execution && now().getTime() - Date.parse(createdAt) < LOST_AFTER_MS) return undefined;
    return outcomeOfExecution(execution?.status);
  };

  /** The account a run of `request` will use, chosen now (portal-account-choice.ts). */
  const accountFor = (organizationId: string, request: StoredRequest, named: string | undefined) =>
    choosePortalAccount({ accounts, automated }, { clientId: request.clientId, organizationId, request, named });

  const queuedRun = (
    base: Pick<RpaRunRecord, 'clientId' | 'externalId' | 'kind' | 'clientUserId' | 'organizationId'> & {
      batchId?: string;
    },
    account: StoredPortalAccount,
  ): RpaRunRecord => {
    const at = timestamp();
    return {
      ...base,
      portalAccountId: account.externalId,
      portalId: account.portalId,
      runId: uuidv7(now().getTime()),
      status: 'queued',
      steps: withStep(
        withStep([], at, 'queued'),
        at,
        'portal account selected',
        `${account.portalId} ${account.externalId}`,
      ),
      enteredValues: {},
      screenshots: [],
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
  };

  /** StartExecution failed: the run will never be picked up. Fails it (without an outcome: no portal was involved). */
  const notStarted = (run: RpaRunRecord) =>
    changeRun(
      runs,
      run,
      (current) =>
        isTerminal(current.status)
          ? undefined
          : { ...current, status: 'failed', steps: withStep(current.steps, timestamp(), 'not started') },
      now,
    );

  /**
   * Each request's account, or RequestsNotAutomatable naming every request none can be chosen for.
   * Requests of one payer share the answer: a batch reads each payer's accounts once.
   */
  const chooseEach = async (organizationId: string, found: StoredRequest[], named: string | undefined) => {
    const byPayer = new Map<string, Promise<StoredPortalAccount>>();
    const settled = await Promise.allSettled(
      found.map((request) => {
        const payer = JSON.stringify(
          (request.document.patient as Record<string, unknown> | undefined)?.PayerId ?? null,
        );
        if (!byPayer.has(payer)) byPayer.set(payer, accountFor(organizationId, request, named));
        // The reason names the request: another request of the payer gets its own.
        return byPayer.get(payer)!.catch((error: unknown) => {
          if (error instanceof NoPortalAccount) throw new NoPortalAccount(error.reason, request.externalId);
          throw error;
        });
      }),
    );
    const refused = settled.flatMap((result) =>
      result.status === 'rejected' && result.reason instanceof NoPortalAccount ? [result.reason] : [],
    );
    const other = settled.find((result) => result.status === 'rejected' && !(result.reason instanceof NoPortalAccount));
    if (other) throw (other as PromiseRejectedResult).reason;
    if (refused.length > 0) throw new RequestsNotAutomatable(refused);
    return settled.map((result) => (result as PromiseFulfilledResult<StoredPortalAccount>).value);
  };

  return {
    /**
     * A scraper token for one request on behalf of one of the caller's client users, naming the API
     * key that asked for it (`keyId`, the authorizer's).
     */
    issueAccessToken: async (caller: Scope & { keyId: string }, externalId: string, clientUserId: string) => {
      const { keyId, ...scope } = caller;
      await clientUser(scope, clientUserId);
      await existingRequest(scope.clientId, externalId);
      const { token, expiresAt } = await tokens.sign({ ...scope, keyId, clientUserId, requestExternalId: externalId });
      return { accessToken: token, expiresAt };
    },

    /**
     * The claims of a token for this request whose API key is still active; InvalidScraperToken
     * otherwise. One read: revoking the key, or deleting the client (which revokes all its keys),
     * ends its tokens too. A key whose organization is not the token's is refused alike.
     */
    verifyAccessToken: async (token: string | undefined, externalId: string) => {
      const claims = await tokens.verify(token, externalId);
      const key = await tenants.getApiKeyById(claims.clientId, claims.keyId);
      if (!key || apiKeyState(key, now()) !== 'active') throw new InvalidScraperToken('api key not active');
      if (key.organizationId !== claims.organizationId) throw new InvalidScraperToken('api key scope');
      return claims;
    },

    /**
     * What a token holder sees: the request's authorization with its latest changes, and its latest
     * runs with short-lived screenshot URLs. A token issued to an organization-restricted key shows
     * only its organization's runs among them; the history is the request's, so it shows all of it.
     */
    session: async (claims: ScraperClaims): Promise<ScraperSession> => {
      const request = await existingRequest(claims.clientId, claims.requestExternalId);
      const scope: Scope = claims.organizationId
        ? { clientId: claims.clientId, organizationId: claims.organizationId }
        : { clientId: claims.clientId };
      const [latest, changes] = await Promise.all([
        runs.latestRuns(claims.clientId, claims.requestExternalId, SESSION_RUNS),
        history.page(claims.clientId, claims.requestExternalId, { limit: SESSION_HISTORY }),
      ]);
      return {
        requestExternalId: request.externalId,
        clientUserId: claims.clientUserId,
        tokenExpiresAt: claims.expiresAt,
        authorization: request.authorization,
        authorizationHistory: changes.entries.map(historyEntryOf),
        runs: await Promise.all(
          latest
            .filter((run) => reaches(scope, run.organizationId))
            .map(async (run) => ({
              ...runViewOf(run),
              screenshots: await Promise.all(
                run.screenshots.map(async ({ objectKey, label, capturedAt }, i) => {
                  const { url, expiresAt } = await screenshots.presignGet(objectKey, SCREENSHOT_URL_SECONDS);
                  return { n: i + 1, label, capturedAt, url, urlExpiresAt: expiresAt };
                }),
              ),
            })),
        ),
      };
    },

    /** Queues a view-on-page run and starts its execution; the run, with its execution's ARN. */
    startViewOnPage: async (
      scope: Scope,
      externalId: string,
      { clientUserId, portalAccountExternalId }: StartBody,
    ): Promise<RpaRunRecord> => {
      const { clientId } = scope;
      const user = await clientUser(scope, clientUserId);
      const request = await existingRequest(clientId, externalId);
      const account = await accountFor(user.organizationId, request, portalAccountExternalId);
      const run = queuedRun(
        { clientId, externalId, kind: 'view-on-page', clientUserId, organizationId: user.organizationId },
        account,
      );
      const admitted = await quotas.admit(clientId, run.runId, 1, TIMEOUTS.viewOnPage);
      await runs.createRun(run);
      let executionArn: string;
      try {
        // The account is fixed here: the credentials function hands out only this account's (run-credentials.ts).
        executionArn = await automation.start('view-on-page', run.runId, {
          clientId,
          requestExternalId: externalId,
          runId: run.runId,
          portalAccountId: account.externalId,
        });
      } catch (error) {
        await notStarted(run);
        await admitted.giveBack();
        throw error;
      }
      // The worker may already be writing the run: set the ARN on whatever version is current.
      const started = await changeRun(runs, run, (current) => ({ ...current, executionArn }), now);
      return started ?? { ...run, executionArn };
    },

    /** Queues one run per request and starts the batch's execution; the batch. */
    startCheckAuthStatus: async (
      scope: Scope,
      {
        clientUserId,
        portalAccountExternalId,
        requestExternalIds,
      }: StartBody & { requestExternalIds: readonly string[] },
    ): Promise<RpaBatchRecord> => {
      const { clientId } = scope;
      const count = new Set(requestExternalIds).size;
      if (count === 0 || count > MAX_BATCH_ITEMS || count !== requestExternalIds.length) {
        throw new Invalid(`A batch checks 1 to ${MAX_BATCH_ITEMS} distinct requests.`, { field: 'requestExternalIds' });
      }
      const user = await clientUser(scope, clientUserId);
      const found = await Promise.all(requestExternalIds.map((externalId) => requests.get(clientId, externalId)));
      const missing = requestExternalIds.filter((_, i) => !found[i]);
      if (missing.length > 0) throw new RequestsNotFound(missing);
      const chosen = await chooseEach(user.organizationId, found as StoredRequest[], portalAccountExternalId);

      const batchId = randomUUID();
      const queued = requestExternalIds.map((externalId, i) =>
        queuedRun(
          {
            clientId,
            externalId,
            kind: 'check-auth-status',
            batchId,
            clientUserId,
            organizationId: user.organizationId,
          },
          chosen[i]!,
        ),
      );
      const items: BatchItem[] = queued.map((run) => ({ requestExternalId: run.externalId, runId: run.runId }));
      const at = timestamp();
      const batch: RpaBatchRecord = {
        clientId,
        batchId,
        clientUserId,
        organizationId: user.organizationId,
        items,
        status: 'running',
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      const admitted = await quotas.admit(clientId, batchId, queued.length, TIMEOUTS.checkAuthStatus);
      await runs.createBatch(batch);
      await Promise.all(queued.map((run) => runs.createRun(run)));
      let executionArn: string;
      try {
        executionArn = await automation.start('check-auth-status', batchId, {
          clientId,
          batchId,
          groups: groupsByAccount(queued),
        });
      } catch (error) {
        await Promise.all(queued.map(notStarted));
        await changeBatch(
          runs,
          clientId,
          batchId,
          (current) => ({ ...current, status: 'done', finishedAt: timestamp() }),
          now,
        );
        await admitted.giveBack();
        throw error;
      }
      // The execution may already have finished the batch: set the ARN on whatever version is current.
      const started = await changeBatch(runs, clientId, batchId, (current) => ({ ...current, executionArn }), now);
      return started ?? { ...batch, executionArn };
    },

    /**
     * One run of one request. A run its execution left unended (the execution ended, or is gone) is
     * failed now, with the outcome that says how (execution-ended.ts).
     */
    getRun: async (scope: Scope, externalId: string, runId: string) => {
      const { clientId } = scope;
      const ref = { clientId, externalId, runId };
      let run = await runs.getRun(ref);
      if (!run || !reaches(scope, run.organizationId)) throw new NotFound(`Run ${runId}`);
      const executionArn =
        run.executionArn ?? (run.batchId ? (await runs.getBatch(clientId, run.batchId))?.executionArn : undefined);
      if (!isTerminal(run.status)) {
        // Every task records its run before it returns: the run is read again after the execution was.
        const outcome = await endedExecutionOutcome(executionArn, run.createdAt);
        if (outcome) {
          await ender.endRun(ref, outcome);
          run = (await runs.getRun(ref)) ?? run;
        }
      }
      return runViewOf(run, executionArn);
    },

    /**
     * A batch's progress: each item's run, read in one batched read. A batch its execution left open
     * (the execution ended, or is gone) is closed now, its unended runs failed.
     */
    batchProgress: async (scope: Scope, batchId: string): Promise<BatchProgress> => {
      const { clientId } = scope;
      let batch = await runs.getBatch(clientId, batchId);
      if (!batch || !reaches(scope, batch.organizationId)) throw new NotFound(`Batch ${batchId}`);
      if (batch.status !== 'done') {
        const outcome = await endedExecutionOutcome(batch.executionArn, batch.createdAt);
        if (outcome) batch = (await ender.endBatch(clientId, batchId, outcome)).batch ?? batch;
      }
      const read = await runs.getRuns(
        clientId,
        batch.items.map(({ requestExternalId, runId }) => ({ externalId: requestExternalId, runId })),
      );
      const byId = new Map(read.map((run) => [run.runId, run]));
      const items = batch.items.map(({ requestExternalId, runId }) => {
        const run = byId.get(runId);
        return {
          requestExternalId,
          runId,
          status: run?.status ?? ('queued' as const),
          outcome: run?.outcome ?? null,
          authorization: run?.authorization ?? null,
        };
      });
      return {
        batchId,
        status: batch.status,
        total: items.length,
        done: items.filter((item) => isTerminal(item.status)).length,
        failed: items.filter((item) => item.status === 'failed').length,
        executionId: batch.executionArn ?? null,
        createdAt: batch.createdAt,
        finishedAt: batch.finishedAt ?? null,
        items,
      };
    },
  };
};

export type RpaService = ReturnType<typeof rpaService>;
