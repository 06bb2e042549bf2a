import { randomUUID } from 'node:crypto';
import type { Bundle } from '@medplum/fhirtypes';
import type { AttachmentRecord } from '#lib/entities/attachment';
import type { StoredRequest } from '#lib/entities/request';
import type { PayerSubmissionRecord, RpaRunRecord } from '#lib/entities/rpa';
import { NotFound } from '#lib/errors';
import { uuidv7 } from '#lib/ids';
import type { SubmittedClaimStore } from '#lib/payer-subscriptions/submitted-claim-store';
import type { PayerConnectionChoice } from '#lib/runs/payer-directory';
import { withStep } from '#lib/runs/run-changes';
import { existingRequest, type RunStartContext as StartContext } from '#lib/runs/run-context';
import { clientUserInScope, type Scope } from '#lib/tenancy/scope';
import { latestSubmissions } from './latest-submission.ts';
import type { MappingProblem, PasAttachment } from './pas/mapping-context.ts';
import { refuseOnPortal } from './portal-refusal.ts';
import { buildSubmissionBundle } from './submission-bundle.ts';
import {
  AttachmentsNotAvailable,
  DeniedNotUpdatable,
  NoPayerApi,
  NoPayerConnection,
  RequestNotMappable,
  SubmissionInProgress,
} from './submission-errors.ts';
import { startSubmitRun } from './submit-run-start.ts';

/*
 * Starting a submission to the payer's PAS API (POST …/Requests/{externalId}/submit): the payer and the
 * organization's connection to it are chosen, the Bundle is built from the stored request (a request
 * that lacks what PAS cannot do without is refused with every such field's path, before anything is
 * sent), a `submit` run is queued and its execution started. A dry run answers the Bundle and its
 * problems and starts nothing. Submitting is always this explicit call: portal drivers never submit.
 */

/** What a submission's start reads: the run core's start context without the portal's accounts. */
export type SubmissionContext = Pick<
  StartContext,
  'runs' | 'requests' | 'payers' | 'attachments' | 'tenants' | 'automation' | 'quotas' | 'now'
> & { submittedClaims: SubmittedClaimStore };

export interface SubmitBody {
  clientUserId: string;
  payerConnectionExternalId?: string | undefined;
  dryRun?: boolean | undefined;
  /** The attachments the submission carries besides those the replaced claim had (the answer to a request for more). */
  attachmentIds?: string[] | undefined;
}

export type SubmissionStart = { dryRun: true; bundle: Bundle; problems: MappingProblem[] } | { run: RpaRunRecord };

const payerIdOf = (request: StoredRequest): string | null => {
  const payerId = (request.document.patient as Record<string, unknown> | undefined)?.PayerId;
  return typeof payerId === 'string' && payerId !== '' ? payerId : null;
};

/** The connection the submission goes through: the one named, else the organization's active one to the payer. */
export async function connectionFor(
  ctx: SubmissionContext,
  organizationId: string,
  request: StoredRequest,
  named: string | undefined,
): Promise<{ connection: PayerConnectionChoice; payerName: string | null }> {
  const { clientId, externalId } = request;
  const namedConnection = named ? await ctx.payers.connection(clientId, named) : undefined;
  if (named && namedConnection?.organizationId !== organizationId) throw new NotFound(`Payer connection ${named}`);
  const payerId = payerIdOf(request) ?? namedConnection?.payerId ?? null;
  const api = payerId === null ? undefined : await ctx.payers.apiOf(payerId);
  if (payerId === null || !api) throw new NoPayerApi(externalId, payerId);
  const connection = namedConnection ?? (await ctx.payers.activeConnection(clientId, organizationId, payerId));
  if (!connection || connection.payerId !== payerId) throw new NoPayerConnection(externalId, 'no_payer_connection');
  if (connection.status !== 'active') throw new NoPayerConnection(externalId, 'payer_connection_not_active');
  return { connection, payerName: api.name };
}

/** The request's verified attachments as the Bundle lists them (their bytes are added when it is sent). */
export const pasAttachmentsOf = (records: readonly AttachmentRecord[]): PasAttachment[] =>
  records
    .filter((record) => record.status === 'available')
    .map(({ attachmentId, fileName, contentType, size, sha256, createdAt, documentType }) => ({
      attachmentId,
      fileName,
      contentType,
      size,
      sha256,
      createdAt,
      ...(documentType !== undefined ? { documentType } : {}),
    }));

export function queuedSubmission(
  ctx: SubmissionContext,
  request: StoredRequest,
  clientUserId: string,
  connection: PayerConnectionChoice,
): RpaRunRecord {
  const at = ctx.now().toISOString();
  return {
    clientId: request.clientId,
    externalId: request.externalId,
    runId: uuidv7(ctx.now().getTime()),
    kind: 'submit',
    clientUserId,
    organizationId: connection.organizationId,
    channel: 'pas',
    payerConnectionId: connection.externalId,
    // One identifier for every attempt of this run: the payer sees one submission however often we retry.
    submission: { bundleIdentifier: randomUUID(), sentAt: null },
    status: 'queued',
    steps: withStep(withStep([], at, 'queued'), at, 'payer connection selected', connection.externalId),
    enteredValues: {},
    screenshots: [],
    version: 1,
    createdAt: at,
    updatedAt: at,
  };
}

/** What a submit adds to its submission: an update of the claim the payer took last, and the named attachments. */
interface Chained {
  fields: Partial<PayerSubmissionRecord>;
  replaced: PayerSubmissionRecord | undefined;
}

/**
 * A request the payer holds a claim of (its latest taken submission, unless that was a cancel) goes as an
 * update of that claim, never as a second claim; a denied one cannot be updated (PAS: a new request).
 */
async function chainedSubmission(
  ctx: SubmissionContext,
  request: StoredRequest,
  available: readonly PasAttachment[],
  attachmentIds: string[] | undefined,
): Promise<Chained> {
  const unknown = (attachmentIds ?? []).filter((id) => !available.some((attachment) => attachment.attachmentId === id));
  if (unknown.length > 0) throw new AttachmentsNotAvailable(request.externalId, unknown);
  const named = attachmentIds ? { attachmentIds: [...new Set(attachmentIds)] } : {};
  const { held, live } = await latestSubmissions(ctx.runs, request.clientId, request.externalId);
  if (live) throw new SubmissionInProgress(request.externalId, live.runId);
  const latest = held?.submission;
  if (!latest || latest.action === 'cancel') return { fields: named, replaced: undefined };
  if (request.authorization.status === 'denied') throw new DeniedNotUpdatable(request.externalId);
  return {
    fields: {
      action: 'update',
      relatedClaimIdentifier: latest.bundleIdentifier,
      entryNamespace: latest.entryNamespace ?? latest.bundleIdentifier,
      ...named,
    },
    replaced: latest,
  };
}

/** Checks and builds; a dry run answers here; else queues the run and starts its execution. */
export async function startSubmission(
  ctx: SubmissionContext,
  scope: Scope,
  externalId: string,
  { clientUserId, payerConnectionExternalId, dryRun, attachmentIds }: SubmitBody,
): Promise<SubmissionStart> {
  const user = await clientUserInScope(ctx.tenants, scope, clientUserId);
  const request = await existingRequest(ctx, scope.clientId, externalId);
  refuseOnPortal(request, 'submit');
  const { connection, payerName } = await connectionFor(ctx, user.organizationId, request, payerConnectionExternalId);
  const attachments = pasAttachmentsOf(await ctx.attachments.listByRequest(scope.clientId, externalId));
  const chained = await chainedSubmission(ctx, request, attachments, attachmentIds);
  const queued = queuedSubmission(ctx, request, clientUserId, connection);
  const run: RpaRunRecord = { ...queued, submission: { ...queued.submission!, ...chained.fields } };
  const { bundle, problems } = buildSubmissionBundle({
    request,
    submission: run.submission!,
    submittedAt: run.createdAt,
    payer: { payerId: connection.payerId, name: payerName },
    attachments,
    replaced: chained.replaced,
  });
  if (dryRun) return { dryRun: true, bundle, problems };
  if (problems.length > 0) throw new RequestNotMappable(externalId, problems);
  return { run: await startSubmitRun(ctx, run) };
}
