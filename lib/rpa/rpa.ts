import { randomUUID } from 'node:crypto';
import { DomainError, Invalid, NotFound } from '#lib/errors';
import { log } from '#lib/observability/logger';
import type { Authorization, RequestStore } from '#lib/requests/request-store';
import { clientUserInScope, reaches, type Scope } from '#lib/tenancy/scope';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import { MAX_BATCH_REQUESTS } from '#lib/validation/schemas/rpa';
import type { AutomationStarter, ExecutionStatus } from './automation-starter.ts';
import {
  type BatchItem,
  type EnteredValues,
  isTerminal,
  type PortalAuthorizationRecord,
  type RpaBatchRecord,
  type RpaRunRecord,
  type RunKind,
  type RunOutcome,
  type RunStatus,
  type RunStep,
  type RunStore,
} from './run-store.ts';
import { changeBatch, changeRun, settledByExecution, uuidv7, withStep } from './runs.ts';
import type { ScraperClaims, ScraperTokens } from './scraper-token.ts';
import type { ScreenshotStorage } from './screenshot-storage.ts';

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
/** Presigned screenshot URLs of the session live this long (the page refreshes every 5 s while a run is active). */
export const SCREENSHOT_URL_SECONDS = 60;

/** Some requests of a batch do not exist (or are another client's): nothing was started. */
export class RequestsNotFound extends DomainError {
  readonly kind = 'not-found';
  constructor(readonly requestExternalIds: string[]) {
    super(`Requests not found: ${requestExternalIds.join(', ')}. No check was started.`, { requestExternalIds });
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
  runs: Array<
    Omit<RunView, 'screenshots'> & {
      screenshots: Array<{ n: number; label: string; capturedAt: string; url: string; urlExpiresAt: string }>;
    }
  >;
}

export interface RpaDependencies {
  runs: RunStore;
  requests: Pick<RequestStore, 'get'>;
  tenants: Pick<TenantStore, 'getClientUser'>;
  automation: AutomationStarter;
  screenshots: Pick<ScreenshotStorage, 'presignGet'>;
  tokens: ScraperTokens;
  now?: () => Date;
}

export const rpaService = ({
  runs,
  requests,
  tenants,
  automation,
  screenshots,
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

  /** The execution's status, or undefined when it cannot be read now (the stored state is shown then). */
  const executionStatus = async (executionArn: string | undefined): Promise<ExecutionStatus | undefined> => {
    if (!executionArn) return undefined;
    try {
      return (await automation.describe(executionArn)).status;
    } catch (error) {
      log.warn('The execution could not be described', { errorName: (error as Error).name });
      return undefined;
    }
  };

  const queuedRun = (
    base: Pick<RpaRunRecord, 'clientId' | 'externalId' | 'kind' | 'clientUserId' | 'organizationId'> & {
      batchId?: string;
    },
  ): RpaRunRecord => {
    const at = timestamp();
    return {
      ...base,
      runId: uuidv7(now().getTime()),
      status: 'queued',
      steps: withStep([], at, 'queued'),
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

  return {
    /** A scraper token for one request on behalf of one of the caller's client users. */
    issueAccessToken: async (scope: Scope, externalId: string, clientUserId: string) => {
      const { clientId } = scope;
      await clientUser(scope, clientUserId);
      await existingRequest(clientId, externalId);
      const { token, expiresAt } = await tokens.sign({ ...scope, clientUserId, requestExternalId: externalId });
      return { accessToken: token, expiresAt };
    },

    /** The claims of a token for this request; InvalidScraperToken otherwise. */
    verifyAccessToken: (token: string | undefined, externalId: string) => tokens.verify(token, externalId),

    /**
     * What a token holder sees: the request's latest runs with short-lived screenshot URLs; a token
     * issued to an organization-restricted key shows only its organization's runs among them.
     */
    session: async (claims: ScraperClaims): Promise<ScraperSession> => {
      const request = await existingRequest(claims.clientId, claims.requestExternalId);
      const scope: Scope = claims.organizationId
        ? { clientId: claims.clientId, organizationId: claims.organizationId }
        : { clientId: claims.clientId };
      const latest = (await runs.latestRuns(claims.clientId, claims.requestExternalId, SESSION_RUNS)).filter((run) =>
        reaches(scope, run.organizationId),
      );
      return {
        requestExternalId: request.externalId,
        clientUserId: claims.clientUserId,
        tokenExpiresAt: claims.expiresAt,
        authorization: request.authorization,
        runs: await Promise.all(
          latest.map(async (run) => ({
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
    startViewOnPage: async (scope: Scope, externalId: string, clientUserId: string): Promise<RpaRunRecord> => {
      const { clientId } = scope;
      const user = await clientUser(scope, clientUserId);
      await existingRequest(clientId, externalId);
      const run = queuedRun({
        clientId,
        externalId,
        kind: 'view-on-page',
        clientUserId,
        organizationId: user.organizationId,
      });
      await runs.createRun(run);
      let executionArn: string;
      try {
        executionArn = await automation.start('view-on-page', run.runId, {
          clientId,
          requestExternalId: externalId,
          runId: run.runId,
        });
      } catch (error) {
        await notStarted(run);
        throw error;
      }
      // The worker may already be writing the run: set the ARN on whatever version is current.
      const started = await changeRun(runs, run, (current) => ({ ...current, executionArn }), now);
      return started ?? { ...run, executionArn };
    },

    /** Queues one run per request and starts the batch's execution; the batch. */
    startCheckAuthStatus: async (
      scope: Scope,
      clientUserId: string,
      requestExternalIds: readonly string[],
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

      const batchId = randomUUID();
      const queued = requestExternalIds.map((externalId) =>
        queuedRun({
          clientId,
          externalId,
          kind: 'check-auth-status',
          batchId,
          clientUserId,
          organizationId: user.organizationId,
        }),
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
      await runs.createBatch(batch);
      await Promise.all(queued.map((run) => runs.createRun(run)));
      let executionArn: string;
      try {
        executionArn = await automation.start('check-auth-status', batchId, { clientId, batchId, items });
      } catch (error) {
        await Promise.all(queued.map(notStarted));
        await changeBatch(
          runs,
          clientId,
          batchId,
          (current) => ({ ...current, status: 'done', finishedAt: timestamp() }),
          now,
        );
        throw error;
      }
      // The execution may already have finished the batch: set the ARN on whatever version is current.
      const started = await changeBatch(runs, clientId, batchId, (current) => ({ ...current, executionArn }), now);
      return started ?? { ...batch, executionArn };
    },

    /** One run of one request, its status settled by its execution's when that ended unrecorded. */
    getRun: async (scope: Scope, externalId: string, runId: string) => {
      const { clientId } = scope;
      const ref = { clientId, externalId, runId };
      let run = await runs.getRun(ref);
      if (!run || !reaches(scope, run.organizationId)) throw new NotFound(`Run ${runId}`);
      const executionArn =
        run.executionArn ?? (run.batchId ? (await runs.getBatch(clientId, run.batchId))?.executionArn : undefined);
      if (!isTerminal(run.status)) {
        const execution = await executionStatus(executionArn);
        if (execution && execution !== 'RUNNING') run = settledByExecution((await runs.getRun(ref)) ?? run, execution);
      }
      return runViewOf(run, executionArn);
    },

    /** A batch's progress: each item's run, read in one batched read. */
    batchProgress: async (scope: Scope, batchId: string): Promise<BatchProgress> => {
      const { clientId } = scope;
      const batch = await runs.getBatch(clientId, batchId);
      if (!batch || !reaches(scope, batch.organizationId)) throw new NotFound(`Batch ${batchId}`);
      const execution = batch.status === 'done' ? undefined : await executionStatus(batch.executionArn);
      const executionEnded = execution !== undefined && execution !== 'RUNNING' && execution !== 'PENDING_REDRIVE';
      const read = await runs.getRuns(
        clientId,
        batch.items.map(({ requestExternalId, runId }) => ({ externalId: requestExternalId, runId })),
      );
      const byId = new Map(read.map((run) => [run.runId, settledByExecution(run, execution)]));
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
        status: batch.status === 'done' || executionEnded ? 'done' : 'running',
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
