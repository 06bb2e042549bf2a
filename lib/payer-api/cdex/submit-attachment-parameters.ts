import type { Identifier, Parameters, ParametersParameter } from '@medplum/fhirtypes';
import type { StoredRequest } from '#lib/entities/request';
import { conceptOf, memberIdSystem, OUR_SYSTEMS, SYSTEMS } from '#lib/payer-api/pas/codes';
import type { MappingProblem, PasPayer } from '#lib/payer-api/pas/mapping-context';
import { addProblem, dateOf, fieldsOf, textOf } from '#lib/payer-api/pas/request-fields';
import { type CdexAttachment, documentOf, LOINC } from './attachment-content.ts';

/*
 * The input of Da Vinci CDex's `$submit-attachment` (CDex 2.1, OperationDefinition submit-attachment,
 * profile cdex-parameters-submit-attachment) for documents a PAS prior authorization's payer asked for
 * (docs/payer-api.md, "CDex attachments"): which authorization they belong to (TrackingId: the claim
 * identifier we sent; AttachTo `preauthorization`), whose (MemberId, and the requester's NPI as ProviderId
 * or OrganizationId), for which payer (PayerId), and one Attachment per document: the items it is about
 * (LineItem: the sequences the payer named for its code), its LOINC code (Code) and the file (Content).
 */

export const SUBMIT_ATTACHMENT_PROFILE =
  'http://hl7.org/fhir/us/davinci-cdex/StructureDefinition/cdex-parameters-submit-attachment';

const NPI = /^[0-9]{10}$/;

export interface CdexSubmission {
  request: StoredRequest;
  payer: PasPayer;
  /** The identifier of the Claim the payer holds (the latest sent submission's). */
  claimIdentifier: string;
  attachments: readonly CdexAttachment[];
}

interface Mapping {
  problems: MappingProblem[];
}

/** The requester's NPI: an organization's is OrganizationId (a type 2 NPI), a person's ProviderId (type 1). */
const senderOf = (mapping: Mapping, document: Record<string, unknown>): ParametersParameter[] => {
  const requester = fieldsOf(document.requestingProvider);
  const npi = textOf(requester.npi);
  if (npi === null || !NPI.test(npi)) {
    // CDex needs ProviderId or OrganizationId: a provider the payer can look up.
    addProblem(
      mapping,
      '/requestingProvider/npi',
      npi === null ? 'missing' : 'unmappable',
      'the requesting provider needs a 10-digit NPI',
    );
    return [];
  }
  const isPerson = textOf(requester.lastName) !== null || textOf(requester.firstName) !== null;
  return [{ name: isPerson ? 'ProviderId' : 'OrganizationId', valueIdentifier: { system: SYSTEMS.npi, value: npi } }];
};

/** The item sequences the payer asked this code for (none: the whole authorization). */
const lineItemsOf = (request: StoredRequest, code: string | null): ParametersParameter[] => {
  if (code === null) return [];
  const asked = request.authorization.informationRequested?.items ?? [];
  const sequences = asked.flatMap((item) =>
    item.code.code === code && item.sequence !== null && (item.code.system ?? LOINC) === LOINC ? [item.sequence] : [],
  );
  return [...new Set(sequences)].map((sequence) => ({ name: 'LineItem', valueString: String(sequence) }));
};

const attachmentParameterOf = (
  mapping: Mapping,
  request: StoredRequest,
  attachment: CdexAttachment,
  member: Identifier,
): ParametersParameter[] => {
  const { data } = attachment;
  if (data === undefined) {
    addProblem(
      mapping,
      `/attachments/${attachment.attachmentId}`,
      'missing',
      "the attachment's file could not be read",
    );
    return [];
  }
  const part: ParametersParameter[] = [
    ...lineItemsOf(request, attachment.code),
    ...(attachment.code !== null ? [{ name: 'Code', valueCodeableConcept: conceptOf(LOINC, attachment.code) }] : []),
    { name: 'Content', resource: documentOf({ ...attachment, data }, member) },
  ];
  return [{ name: 'Attachment', part }];
};

/**
 * The Parameters, and the problems that keep them from being sent (the same JSON Pointers into the
 * request as a PAS Bundle's: lib/payer-api/pas/mapping-context.ts). Never throws.
 */
export const buildSubmitAttachmentParameters = (
  input: CdexSubmission,
): { parameters: Parameters; problems: MappingProblem[] } => {
  const mapping: Mapping = { problems: [] };
  const document = fieldsOf(input.request.document);
  const memberId = textOf(fieldsOf(document.patient).memberId);
  if (memberId === null) addProblem(mapping, '/patient/memberId', 'missing', "the patient's member id is needed");
  const member: Identifier = { system: memberIdSystem(input.payer.payerId), value: memberId ?? '' };
  if (input.attachments.length === 0) addProblem(mapping, '/attachmentIds', 'missing', 'no attachment to send');
  const serviceDate = dateOf(document.fromDate);
  const parameter: ParametersParameter[] = [
    { name: 'TrackingId', valueIdentifier: { system: OUR_SYSTEMS.claim, value: input.claimIdentifier } },
    { name: 'AttachTo', valueCode: 'preauthorization' },
    { name: 'PayerId', valueIdentifier: { system: OUR_SYSTEMS.payerId, value: input.payer.payerId } },
    ...senderOf(mapping, document),
    { name: 'MemberId', valueIdentifier: member },
    ...(serviceDate !== null ? [{ name: 'ServiceDate', valueDateTime: serviceDate }] : []),
    ...input.attachments.flatMap((attachment) => attachmentParameterOf(mapping, input.request, attachment, member)),
  ];
  return {
    parameters: { resourceType: 'Parameters', meta: { profile: [SUBMIT_ATTACHMENT_PROFILE] }, parameter },
    problems: mapping.problems,
  };
};
