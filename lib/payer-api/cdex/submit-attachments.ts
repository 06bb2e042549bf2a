import type { StoredRequest } from '#lib/entities/request';
import type { RpaRunRecord } from '#lib/entities/rpa';
import type { MappingProblem } from '#lib/payer-api/pas/mapping-context';
import type { PayerCallResult, PayerEndpointView, PayerTaskContext } from '#lib/payer-api/payer-task-context';
import { isTerminal, type RunRef } from '#lib/runs/run-store';
import type { CdexAttachment } from './attachment-content.ts';
import { buildSubmitAttachmentParameters } from './submit-attachment-parameters.ts';

/*
 * The documents a payer asked for, sent by CDex `$submit-attachment` (POST `<fhirBase>/Claim/$submit-attachment`)
 * to a payer endpoint that declares it (`attachmentSubmission: 'cdex'`), through the same token, gateway
 * and transport as PAS's operations. What the payer then decides comes as ever: through `$inquire` or a
 * notification, never from this answer (CDex answers 200 with no output parameters).
 */

export interface CdexSendInput {
  ref: RunRef;
  /** The submit run that carries the documents (its steps say what was sent; its connection is the one used). */
  run: RpaRunRecord;
  request: StoredRequest;
  endpoint: PayerEndpointView;
  payerId: string;
  attachments: readonly CdexAttachment[];
  /** The identifier of the Claim the payer holds: the latest sent submission's. */
  claimIdentifier: string;
}

/**
 * `sent`: the payer took the documents (2xx). `not_mappable`: nothing was sent (the request lacks what CDex
 * needs: JSON Pointers as a PAS Bundle's problems). `run_ended`: the run ended meanwhile; nothing sent. Else
 * the call's result as the PAS tasks read it: an `answer` is then a refusal (4xx, the payer's
 * OperationOutcome as its body: CDex says an unaltered retry is pointless), `unavailable` worth a retry.
 */
export type CdexSendResult =
  | 'sent'
  | { kind: 'not_mappable'; problems: MappingProblem[] }
  | { kind: 'run_ended' }
  | PayerCallResult;

const isSuccess = (status: number) => status >= 200 && status < 300;

export async function submitAttachmentsByCdex(ctx: PayerTaskContext, input: CdexSendInput): Promise<CdexSendResult> {
  const { ref, run } = input;
  const { parameters, problems } = buildSubmitAttachmentParameters({
    request: input.request,
    payer: { payerId: input.payerId, name: input.endpoint.name },
    claimIdentifier: input.claimIdentifier,
    attachments: input.attachments,
  });
  if (problems.length > 0) return { kind: 'not_mappable', problems };
  const count = `${input.attachments.length} document(s)`;
  const sending = await ctx.addStep(ref, 'sending the documents to the payer (CDex $submit-attachment)', count);
  // A run that ended (or is gone) stays as it ended: nothing goes to the payer on its behalf.
  if (!sending || isTerminal(sending.status)) return { kind: 'run_ended' };
  const result = await ctx.call({
    clientId: ref.clientId,
    payerConnectionId: run.payerConnectionId!,
    endpoint: input.endpoint,
    operation: 'Claim/$submit-attachment',
    bundle: parameters,
  });
  if (result.kind !== 'answer' || !isSuccess(result.status)) return result;
  await ctx.addStep(ref, 'the payer took the documents', count);
  return 'sent';
}
