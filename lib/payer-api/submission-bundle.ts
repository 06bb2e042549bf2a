import type { Bundle, Claim } from '@medplum/fhirtypes';
import type { StoredRequest } from '#lib/entities/request';
import type { PayerSubmissionRecord } from '#lib/entities/rpa';
import { buildPasUpdateBundle } from './pas/claim-update.ts';
import { EXTENSIONS } from './pas/codes.ts';
import type { MappingProblem, PasAttachment, PasPayer } from './pas/mapping-context.ts';
import { buildPasRequestBundle } from './pas/request-bundle.ts';

/*
 * The Bundle of a `submit` run, by its submission's action (docs/payer-api.md, "Updates and cancels"):
 * a first claim, an update of the claim the payer took last, or its cancel. The same at the start (a
 * dry run, the problems) and at every send.
 */

export interface SubmissionBundleInput {
  request: StoredRequest;
  submission: PayerSubmissionRecord;
  submittedAt: string;
  payer: PasPayer;
  /** The request's available attachments. */
  attachments: readonly PasAttachment[];
  /** An update's or cancel's: the submission it replaces (its Claim undefined: sent before Claims were kept). */
  replaced: PayerSubmissionRecord | undefined;
}

/** The attachment ids a Claim carries (its documents' control numbers). */
const attachmentIdsOf = (claim: Claim | undefined) =>
  (claim?.supportingInfo ?? []).flatMap((entry) =>
    (entry.extension ?? [])
      .filter((extension) => extension.url === EXTENSIONS.documentInformation)
      .flatMap((extension) => extension.extension ?? [])
      .filter((part) => part.url === 'controlNumber' && typeof part.valueString === 'string')
      .map((part) => part.valueString!),
  );

/**
 * An update that names attachments carries those and the ones the replaced Claim had; without names,
 * every available one, as a first claim does.
 */
const carriedAttachments = (input: SubmissionBundleInput) => {
  const named = input.submission.attachmentIds;
  if (!named) return input.attachments;
  const carried = new Set([...named, ...attachmentIdsOf(input.replaced?.claim)]);
  return input.attachments.filter((attachment) => carried.has(attachment.attachmentId));
};

export function buildSubmissionBundle(input: SubmissionBundleInput): { bundle: Bundle; problems: MappingProblem[] } {
  const { submission, replaced } = input;
  const first = {
    request: input.request,
    bundleIdentifier: submission.bundleIdentifier,
    submittedAt: input.submittedAt,
    payer: input.payer,
    attachments: carriedAttachments(input),
    entryNamespace: submission.entryNamespace,
  };
  const action = submission.action ?? 'claim';
  if (action === 'claim' || !submission.relatedClaimIdentifier) return buildPasRequestBundle(first);
  const identifier = submission.relatedClaimIdentifier;
  // The resources keep the names the replaced Claim references them by.
  const chained = { ...first, entryNamespace: first.entryNamespace ?? replaced?.entryNamespace ?? identifier };
  // A claim sent before Claims were kept on its run: the request as it is now stands for it (no flags).
  const claim =
    replaced?.claim ??
    (buildPasRequestBundle({ ...chained, bundleIdentifier: identifier }).bundle.entry![0]!.resource as Claim);
  return buildPasUpdateBundle({ ...chained, action, replaced: { claim, identifier } });
}
