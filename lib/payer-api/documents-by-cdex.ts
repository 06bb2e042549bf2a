import { randomUUID } from 'node:crypto';
import type { StoredRequest } from '#lib/entities/request';
import type { RpaRunRecord } from '#lib/entities/rpa';
import type { TaskResult } from '#lib/runs/run-recorder';
import type { RunRef } from '#lib/runs/run-store';
import { loincCodeOf } from './cdex/attachment-content.ts';
import { submitAttachmentsByCdex } from './cdex/submit-attachments.ts';
import { readPasAnswer } from './pas/answer-reader.ts';
import { buildPasInquiryBundle } from './pas/inquiry-bundle.ts';
import { recordDecision } from './payer-decisions.ts';
import type { PayerCallResult, PayerEndpointView, PayerTaskContext } from './payer-task-context.ts';

/*
 * The answer to a request for more information, to a payer endpoint that takes CDex `$submit-attachment`
 * (docs/payer-api.md, "CDex attachments"): a submit naming attachments goes there instead of in a claim
 * update, and nothing else of the request goes with it (a change of the request itself is a submit without
 * `attachmentIds`). CDex answers nothing of the claim, so once the payer took the documents the claim is
 * read with `$inquire` and recorded as any answer: the requests the documents answered drop from
 * `informationRequested` when the payer drops them.
 */

/** Whether the run's documents go by CDex: an update naming attachments, to an endpoint that takes CDex. */
export const goesByCdex = (run: RpaRunRecord, endpoint: PayerEndpointView): boolean =>
  endpoint.attachmentSubmission === 'cdex' &&
  run.submission?.action === 'update' &&
  (run.submission.attachmentIds?.length ?? 0) > 0 &&
  !!run.submission.relatedClaimIdentifier;

/** What the SubmitPasClaim task does with a result that is not an answer (its retries, its ends). */
export interface CdexOutcomes {
  unavailable(retryAfterSeconds: number | null): Promise<TaskResult & { waitSeconds: number }>;
  endedBy(result: PayerCallResult): Promise<TaskResult & { waitSeconds: number }>;
}

interface CdexSend {
  ref: RunRef;
  run: RpaRunRecord;
  request: StoredRequest;
  endpoint: PayerEndpointView;
  payerId: string;
}

const ended = (result: TaskResult) => ({ ...result, waitSeconds: 0 });

/** The named attachments, with the LOINC code each answers (its documentType), bytes included. */
async function namedAttachments(ctx: PayerTaskContext, { ref, run }: CdexSend) {
  const named = new Set(run.submission!.attachmentIds);
  return (await ctx.attachmentsOf(ref.clientId, ref.externalId))
    .filter((attachment) => named.has(attachment.attachmentId))
    .map((attachment) => ({ ...attachment, code: loincCodeOf(attachment.documentType) }));
}

/** The claim as the payer holds it now, recorded; the request keeps its decision deadline. */
async function readAfterDocuments(ctx: PayerTaskContext, send: CdexSend, outcomes: CdexOutcomes) {
  const { ref, run, request, endpoint, payerId } = send;
  const bundle = buildPasInquiryBundle({
    request,
    bundleIdentifier: randomUUID(),
    inquiredAt: ctx.now().toISOString(),
    payer: { payerId, name: endpoint.name },
    claimIdentifier: run.submission!.relatedClaimIdentifier!,
    authorizationNumber: request.authorization.number,
  });
  const call = { clientId: ref.clientId, payerConnectionId: run.payerConnectionId!, endpoint };
  const result = await ctx.call({ ...call, operation: 'Claim/$inquire', bundle });
  if (result.kind === 'unavailable') return outcomes.unavailable(result.retryAfterSeconds);
  if (result.kind !== 'answer') return outcomes.endedBy(result);
  const answer = readPasAnswer(result.body);
  if (answer.kind !== 'decision') return ended(await ctx.finish(ref, 'payer_error'));
  return ended(await recordDecision(ctx, ref, run, answer.decision, 'submitted'));
}

/** Sends the named documents by CDex, then reads the claim; or ends or retries the run as the task would. */
export async function documentsByCdex(ctx: PayerTaskContext, send: CdexSend, outcomes: CdexOutcomes) {
  const { ref } = send;
  const attachments = await namedAttachments(ctx, send);
  const claimIdentifier = send.run.submission!.relatedClaimIdentifier!;
  const result = await submitAttachmentsByCdex(ctx, { ...send, attachments, claimIdentifier });
  if (result === 'sent') return readAfterDocuments(ctx, send, outcomes);
  if (result.kind === 'run_ended') return ended({ runId: ref.runId, status: null, outcome: null });
  if (result.kind === 'not_mappable') {
    await ctx.addStep(ref, 'the request lacks fields CDex needs', result.problems.map((p) => p.path).join(' '));
    return ended(await ctx.finish(ref, 'request_not_mappable'));
  }
  if (result.kind === 'unavailable') return outcomes.unavailable(result.retryAfterSeconds);
  if (result.kind === 'answer') {
    // A 4xx with the payer's OperationOutcome: CDex says the same documents sent again are refused again.
    await ctx.addStep(ref, 'the payer refused the documents', `HTTP ${result.status}`);
    return ended(await ctx.finish(ref, 'payer_refused'));
  }
  return outcomes.endedBy(result);
}
