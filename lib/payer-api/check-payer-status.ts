import { randomUUID } from 'node:crypto';
import type { BatchItem } from '#lib/entities/rpa';
import { RunNotFound } from '#lib/runs/errors';
import { liveRunsOf } from '#lib/runs/live-runs';
import { idsOf, refsOf } from '#lib/runs/run-recorder';
import { isTerminal, type RunRef } from '#lib/runs/run-store';
import { taskTime } from '#lib/runs/task-time';
import { readPasAnswer } from './pas/answer-reader.ts';
import { buildPasInquiryBundle } from './pas/inquiry-bundle.ts';
import { PAS_TIMEOUT_MS } from './pas-transport.ts';
import { waitSecondsBefore } from './payer-back-off.ts';
import { recordDecision, recordNotFound } from './payer-decisions.ts';
import { recordRefusal } from './payer-refusals.ts';
import type { Invocation, PayerEndpointView, PayerTaskContext } from './payer-task-context.ts';

/*
 * CheckPayerStatus: a batch's requests of one payer connection, each read with `Claim/$inquire` — no
 * browser, no lease, no login. One after the other while the task has time, each within PAS's 15 s;
 * an inquiry the payer took and never answered ends its run `payer_unavailable` alone, and the next
 * ones go on. A payer that is unavailable (429, 5xx, no connection) makes the group wait (its
 * Retry-After, or our back-off) in the state machine, and the rest is read after.
 */

export interface PayerGroupResult {
  remaining: BatchItem[];
  more: boolean;
  /** Seconds the state machine waits before it calls again for `remaining` (0: at once). */
  waitSeconds: number;
}

/**
 * Time an inquiry may take, kept in reserve before starting one: a token (an assertion and a POST) and
 * the PAS call, which the IG gives the payer 15 s to answer.
 */
const INQUIRY_RESERVE_MS = 20_000;
/** Kept free at the end of the task for recording the inquiry's outcome and returning. */
const RECORDING_MS = 3_000;

const itemsOf = (refs: RunRef[]): BatchItem[] =>
  refs.map(({ externalId, runId }) => ({ requestExternalId: externalId, runId }));

/** The claim identifier of the request's latest submission through this channel, if any. */
async function submittedClaimOf(ctx: PayerTaskContext, ref: RunRef): Promise<string | null> {
  const runs = await ctx.runs.latestRuns(ref.clientId, ref.externalId, 20);
  return runs.find((run) => run.kind === 'submit' && run.submission?.sentAt)?.submission?.bundleIdentifier ?? null;
}

type Checked = 'done' | { waitSeconds: number } | 'credentials_refused' | 'refused_by_api' | 'no_payer_connection';

/** The group's connection as every inquiry of it needs it: read once per invocation. */
interface PayerGroup {
  payerConnectionId: string;
  payerId: string;
  endpoint: PayerEndpointView;
}

/**
 * One request's inquiry, recorded; or how long to wait before it is tried again. The payer has PAS's
 * 15 s to answer, or what the task has left when that is less.
 */
async function checkOne(ctx: PayerTaskContext, ref: RunRef, group: PayerGroup, task: Invocation): Promise<Checked> {
  const { payerConnectionId, endpoint } = group;
  const stored = await ctx.runs.getRun(ref);
  if (stored?.kind !== 'check-auth-status') throw new RunNotFound();
  if (isTerminal(stored.status)) return 'done';
  const attempt = (stored.payerAttempts ?? 0) + 1;
  const run = await ctx.addStep(ref, 'started', `attempt ${attempt}`, { status: 'running' });
  if (!run) return 'done';
  const request = await ctx.requests.get(ref.clientId, ref.externalId);
  if (!request) return ctx.finish(ref, 'request_not_found').then((): Checked => 'done');
  const bundle = buildPasInquiryBundle({
    request,
    bundleIdentifier: randomUUID(),
    inquiredAt: ctx.now().toISOString(),
    payer: { payerId: group.payerId, name: endpoint.name },
    claimIdentifier: await submittedClaimOf(ctx, ref),
    authorizationNumber: request.authorization.number,
  });
  const result = await ctx.call({
    clientId: ref.clientId,
    payerConnectionId,
    endpoint,
    operation: 'Claim/$inquire',
    bundle,
    timeoutMs: Math.max(1, Math.min(PAS_TIMEOUT_MS, task.getRemainingTimeInMillis() - RECORDING_MS)),
  });
  if (result.kind === 'credentials_refused') return result.refusedByApi ? 'refused_by_api' : 'credentials_refused';
  if (result.kind === 'no_payer_connection') return 'no_payer_connection';
  if (result.kind === 'unavailable') {
    // Taken and never answered: this request's, not the payer's (which answered the others or said it is
    // unavailable); retried, it would hold the rest of the group behind it again.
    if (result.timedOut || attempt >= ctx.maxAttempts)
      return ctx.finish(ref, 'payer_unavailable', { payerAttempts: attempt }).then((): Checked => 'done');
    const waitSeconds = waitSecondsBefore(attempt, result.retryAfterSeconds);
    await ctx.addStep(ref, "the payer's API did not answer; the attempt will be retried", `in ${waitSeconds} s`, {
      payerAttempts: attempt,
    });
    return { waitSeconds };
  }
  if (result.kind === 'answer_rejected') return ctx.finish(ref, 'payer_error').then((): Checked => 'done');
  const answer = readPasAnswer(result.body);
  if (answer.kind === 'decision') await recordDecision(ctx, ref, run, answer.decision, 'status_read');
  else if (answer.kind === 'not_found') await recordNotFound(ctx, ref, run);
  else if (answer.kind === 'refused') await recordRefusal(ctx, ref, bundle, answer.issues);
  else await ctx.finish(ref, 'payer_error');
  return 'done';
}

/** Every run left ends with `outcome`: the connection cannot serve any of them. */
async function endAll(ctx: PayerTaskContext, refs: RunRef[], outcome: 'no_payer_connection' | 'credentials_refused') {
  for (const ref of refs) await ctx.finish(ref, outcome);
  return { remaining: [], more: false, waitSeconds: 0 };
}

/** CheckPayerStatus: the group's inquiries while the invocation has time; the rest for the next call. */
export async function checkPayerStatus(
  ctx: PayerTaskContext,
  input: unknown,
  invocation?: Invocation,
): Promise<PayerGroupResult> {
  const { clientId, payerConnectionId } = idsOf(input, ['clientId', 'batchId', 'payerConnectionId']) as {
    clientId: string;
    payerConnectionId: string;
  };
  const task = taskTime(invocation, ctx.taskTimeoutSeconds);
  const live = await liveRunsOf(
    ctx.runs,
    clientId,
    refsOf(clientId, (input as { items?: unknown }).items),
    'check-auth-status',
  );
  if (live.length === 0) return { remaining: [], more: false, waitSeconds: 0 };
  const connection = await ctx.connectionOf(clientId, payerConnectionId);
  const endpoint = connection?.status === 'active' ? await ctx.endpointOf(connection.payerId) : undefined;
  if (!connection || !endpoint) return endAll(ctx, live, 'no_payer_connection');
  for (const [i, ref] of live.entries()) {
    // The first always goes; another only while an inquiry still fits in the invocation.
    if (i > 0 && task.getRemainingTimeInMillis() < INQUIRY_RESERVE_MS) {
      return { remaining: itemsOf(live.slice(i)), more: true, waitSeconds: 0 };
    }
    const checked = await checkOne(ctx, ref, { payerConnectionId, payerId: connection.payerId, endpoint }, task);
    if (checked === 'refused_by_api') await ctx.markAttention(clientId, payerConnectionId);
    if (checked === 'credentials_refused' || checked === 'refused_by_api') {
      return endAll(ctx, live.slice(i), 'credentials_refused');
    }
    if (checked === 'no_payer_connection') return endAll(ctx, live.slice(i), 'no_payer_connection');
    if (checked !== 'done') return { remaining: itemsOf(live.slice(i)), more: true, waitSeconds: checked.waitSeconds };
  }
  return { remaining: [], more: false, waitSeconds: 0 };
}
