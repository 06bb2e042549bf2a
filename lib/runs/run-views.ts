import type {
  EnteredValues,
  PortalAuthorizationRecord,
  RpaRunRecord,
  RunChannel,
  RunKind,
  RunOutcome,
  RunStatus,
  RunStep,
} from '#lib/entities/rpa';
import type { AuthorizationHistoryEntry } from '#lib/requests/authorization-history';
import type { authorizationView } from '#lib/requests/request-document';

/** A run as the client (and a token holder) reads it. */
export interface RunView {
  runId: string;
  requestExternalId: string;
  kind: RunKind;
  batchId: string | null;
  clientUserId: string;
  portalAccountId: string | null;
  portalId: string | null;
  /** The way the run reached the payer: its portal or its API (runs recorded before the API channel: portal). */
  channel: RunChannel;
  payerConnectionId: string | null;
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
  channel: run.channel ?? 'portal',
  payerConnectionId: run.payerConnectionId ?? null,
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
  /** The request's authorization as clients read it (the latest status check's result). */
  authorization: ReturnType<typeof authorizationView>;
  /** Its latest changes, newest first: the request's, whichever organization's run read them. */
  authorizationHistory: AuthorizationHistoryEntry[];
  runs: Array<
    Omit<RunView, 'screenshots'> & {
      screenshots: Array<{ n: number; label: string; capturedAt: string; url: string; urlExpiresAt: string }>;
    }
  >;
}
