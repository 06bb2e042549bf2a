import { randomUUID } from 'node:crypto';
import type { Bundle, Claim } from '@medplum/fhirtypes';
import type { StoredRequest } from '#lib/entities/request';
import type { RpaRunRecord } from '#lib/entities/rpa';
import { RunNotFound } from '#lib/runs/errors';
import { runRefOf, type TaskResult } from '#lib/runs/run-recorder';
import { isTerminal, type RunRef } from '#lib/runs/run-store';
import { decisionDueAtOf, isUrgentRequest } from './decision-deadline.ts';
import { documentsByCdex, goesByCdex } from './documents-by-cdex.ts';
import { sentSubmissionOf } from './latest-submission.ts';
import type { PayerDecision } from './pas/answer-model.ts';
import { readPasAnswer } from './pas/answer-reader.ts';
import { buildPasInquiryBundle } from './pas/inquiry-bundle.ts';
import { waitSecondsBefore } from './payer-back-off.ts';
import { recordDecision } from './payer-decisions.ts';
import { recordRefusal } from './payer-refusals.ts';
import type { PayerCallResult, PayerEndpointView, PayerTaskContext } from './payer-task-context.ts';
import { buildSubmissionBundle } from './submission-bundle.ts';

/*
 * SubmitPasClaim: one attempt at sending a request to the payer's PAS API (`Claim/$submit`). Every
 * attempt of a run sends the same Bundle identifier, so the payer sees one submission however often we
 * retry. A run found already sent (an attempt that ended between sending and recording: a crash, a
 * timeout) asks `Claim/$inquire` first, and sends again only when the payer does not know the claim.
 */

/** What the task tells the state machine: seconds to wait before the next attempt (0: the run ended). */
export interface SubmitTaskResult extends TaskResult {
  waitSeconds: number;
}

const ended = (result: TaskResult): SubmitTaskResult => ({ ...result, waitSeconds: 0 });

/** The run, started (running, its attempt counted); undefined when it ended already. */
async function startedRun(ctx: PayerTaskContext, ref: RunRef): Promise<RpaRunRecord | undefined> {
  const stored = await ctx.runs.getRun(ref);
  if (stored?.kind !== 'submit' || !stored.submission || !stored.payerConnectionId) throw new RunNotFound();
  if (isTerminal(stored.status)) return undefined;
  const attempt = (stored.payerAttempts ?? 0) + 1;
  return ctx.addStep(ref, 'started', `attempt ${attempt}`, { status: 'running' });
}

/** The payer did not answer, or not now: wait and try again, or end the run when attempts are used up. */
async function unavailable(
  ctx: PayerTaskContext,
  ref: RunRef,
  run: RpaRunRecord,
  retryAfterSeconds: number | null,
): Promise<SubmitTaskResult> {
  const attempts = (run.payerAttempts ?? 0) + 1;
  if (attempts >= ctx.maxAttempts)
    return ended(await ctx.finish(ref, 'payer_unavailable', { payerAttempts: attempts }));
  const waitSeconds = waitSecondsBefore(attempts, retryAfterSeconds);
  await ctx.addStep(ref, "the payer's API did not answer; the attempt will be retried", `in ${waitSeconds} s`, {
    payerAttempts: attempts,
  });
  return { runId: ref.runId, status: 'running', outcome: null, waitSeconds };
}

/** An answer that is neither an answer nor unavailability: the run ends, the connection flagged if need be. */
async function endedBy(ctx: PayerTaskContext, ref: RunRef, run: RpaRunRecord, result: PayerCallResult) {
  if (result.kind === 'credentials_refused') {
    if (result.refusedByApi) await ctx.markAttention(ref.clientId, run.payerConnectionId!);
    return ended(await ctx.finish(ref, 'credentials_refused'));
  }
  if (result.kind === 'no_payer_connection') return ended(await ctx.finish(ref, 'no_payer_connection'));
  return ended(await ctx.finish(ref, 'payer_error'));
}

/** `$inquire` of a submission that may have reached the payer: its decision, or undefined when unknown. */
async function reconciled(
  ctx: PayerTaskContext,
  ref: RunRef,
  run: RpaRunRecord,
  request: StoredRequest,
  endpoint: PayerEndpointView,
  payerId: string,
): Promise<SubmitTaskResult | 'not_found'> {
  await ctx.addStep(ref, 'asking the payer whether an earlier attempt reached it');
  const bundle = buildPasInquiryBundle({
    request,
    bundleIdentifier: randomUUID(),
    inquiredAt: ctx.now().toISOString(),
    payer: { payerId, name: endpoint.name },
    claimIdentifier: run.submission!.bundleIdentifier,
    authorizationNumber: null,
  });
  const result = await ctx.call({ ...callOf(ref, run), endpoint, operation: 'Claim/$inquire', bundle });
  if (result.kind === 'unavailable') return unavailable(ctx, ref, run, result.retryAfterSeconds);
  if (result.kind !== 'answer') return endedBy(ctx, ref, run, result);
  const answer = readPasAnswer(result.body);
  if (answer.kind === 'not_found') return 'not_found';
  if (answer.kind === 'decision') {
    const due = deadlineOf(run, run.submission!.sentAt!, isUrgentRequest(request.document), endpoint, answer.decision);
    return ended(await recordDecision(ctx, ref, run, answer.decision, 'submitted', due));
  }
  if (answer.kind === 'refused') return ended(await recordRefusal(ctx, ref, bundle, answer.issues));
  return ended(await ctx.finish(ref, 'payer_error'));
}

/**
 * The decision deadline of what was sent at `sentAt`, as the payer's endpoint is held to one. An update
 * is a request the payer decides anew, so its clock starts again; a cancel starts none: a confirmed one
 * ends the clock (null), one the payer did not confirm leaves the request's as it was (undefined).
 */
const deadlineOf = (
  run: RpaRunRecord,
  sentAt: string,
  urgent: boolean,
  endpoint: PayerEndpointView,
  decision: PayerDecision,
): string | null | undefined => {
  if (run.submission!.action !== 'cancel') return decisionDueAtOf(sentAt, urgent, endpoint.decisionTimeframes);
  return decision.status === 'cancelled' ? null : undefined;
};

const callOf = (ref: RunRef, run: RpaRunRecord) => ({
  clientId: ref.clientId,
  payerConnectionId: run.payerConnectionId!,
});

/** Sends the Bundle and records what the payer answered. */
async function sent(
  ctx: PayerTaskContext,
  ref: RunRef,
  run: RpaRunRecord,
  bundle: Bundle,
  endpoint: PayerEndpointView,
  urgent: boolean,
): Promise<SubmitTaskResult> {
  const sentAt = ctx.now().toISOString();
  // Recorded before sending: an attempt that ends before it records the answer leaves this behind. The
  // Claim is kept for the update or cancel that will replace it.
  const claim = bundle.entry![0]!.resource as Claim;
  const sending = await ctx.addStep(ref, sendingStepOf(run), undefined, {
    submission: { ...run.submission!, sentAt, claim },
  });
  if (!sending) return ended({ runId: ref.runId, status: null, outcome: null });
  const result = await ctx.call({ ...callOf(ref, run), endpoint, operation: 'Claim/$submit', bundle });
  if (result.kind === 'unavailable') return unavailable(ctx, ref, sending, result.retryAfterSeconds);
  if (result.kind !== 'answer') return endedBy(ctx, ref, sending, result);
  const answer = readPasAnswer(result.body);
  if (answer.kind === 'decision') {
    const due = deadlineOf(run, sentAt, urgent, endpoint, answer.decision);
    return ended(await recordDecision(ctx, ref, sending, answer.decision, 'submitted', due));
  }
  if (answer.kind === 'refused') return ended(await recordRefusal(ctx, ref, bundle, answer.issues));
  return ended(await ctx.finish(ref, 'payer_error'));
}

/** The step before each send, by what is sent. */
export const SENDING_STEPS = {
  claim: 'sending the request to the payer',
  update: 'sending the update of the claim to the payer',
  cancel: 'sending the cancel of the claim to the payer',
} as const;

const sendingStepOf = (run: RpaRunRecord) => SENDING_STEPS[run.submission!.action ?? 'claim'];

/** An update's or cancel's: the submission it replaces, as it was sent. */
async function replacedOf(ctx: PayerTaskContext, ref: RunRef, run: RpaRunRecord) {
  const related = run.submission!.relatedClaimIdentifier;
  if (!related || (run.submission!.action ?? 'claim') === 'claim') return undefined;
  return (await sentSubmissionOf(ctx.runs, ref.clientId, ref.externalId, related))?.submission;
}

/** SubmitPasClaim: one attempt; `waitSeconds` > 0 asks the state machine to call again after that long. */
export async function submitPasClaim(ctx: PayerTaskContext, input: unknown): Promise<SubmitTaskResult> {
  const ref = runRefOf(input);
  const run = await startedRun(ctx, ref);
  if (!run) {
    const stored = await ctx.runs.getRun(ref);
    return ended({ runId: ref.runId, status: stored?.status ?? null, outcome: stored?.outcome ?? null });
  }
  const request = await ctx.requests.get(ref.clientId, ref.externalId);
  if (!request) return ended(await ctx.finish(ref, 'request_not_found'));
  const connection = await ctx.connectionOf(ref.clientId, run.payerConnectionId!);
  const endpoint = connection?.status === 'active' ? await ctx.endpointOf(connection.payerId) : undefined;
  if (!connection || !endpoint) return ended(await ctx.finish(ref, 'no_payer_connection'));
  if (run.submission!.sentAt) {
    const known = await reconciled(ctx, ref, run, request, endpoint, connection.payerId);
    if (known !== 'not_found') return known;
  }
  if (goesByCdex(run, endpoint)) {
    return documentsByCdex(
      ctx,
      { ref, run, request, endpoint, payerId: connection.payerId },
      {
        unavailable: (retryAfterSeconds) => unavailable(ctx, ref, run, retryAfterSeconds),
        endedBy: (result) => endedBy(ctx, ref, run, result),
      },
    );
  }
  const { bundle, problems } = buildSubmissionBundle({
    request,
    submission: run.submission!,
    submittedAt: run.createdAt,
    payer: { payerId: connection.payerId, name: endpoint.name },
    attachments: await ctx.attachmentsOf(ref.clientId, ref.externalId),
    replaced: await replacedOf(ctx, ref, run),
  });
  if (problems.length > 0) {
    const detail = problems.map((problem) => problem.path).join(' ');
    await ctx.addStep(ref, 'the request lacks fields the payer API needs', detail);
    return ended(await ctx.finish(ref, 'request_not_mappable'));
  }
  return sent(ctx, ref, run, bundle, endpoint, isUrgentRequest(request.document));
}
