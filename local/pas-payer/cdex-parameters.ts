import { createHash } from 'node:crypto';
import type { Identifier, Parameters, ParametersParameter, Resource } from '@medplum/fhirtypes';
import { outcomeOf, Refusal } from './http.ts';

/*
 * The input of CDex `$submit-attachment` as this payer reads it (CDex 2.1, profile
 * cdex-parameters-submit-attachment: a closed set of parameters): what ties the documents to a claim
 * (TrackingId, AttachTo, MemberId, ProviderId or OrganizationId) and each document (its LineItems, its
 * LOINC Code, its Content: a DocumentReference or a Binary with the bytes inline). A shape out of the
 * profile is 400; content this payer does not take (a URL to fetch, another resource type) is 422.
 */

/** A document as the payer keeps it: no bytes, only what it is and which items it is for. */
export interface ReceivedDocument {
  /** The LOINC code it was sent with; null when none. */
  code: string | null;
  /** Claim item sequences; empty: the whole claim. */
  lineItems: number[];
  contentType: string;
  size: number;
  /** Hex SHA-256 of the bytes: the same document sent again is kept once. */
  sha256: string;
  receivedAt: string;
}

export interface AttachmentSubmission {
  trackingId: Identifier & { value: string };
  attachTo: string;
  memberId: string;
  /** ProviderId's and OrganizationId's values. */
  providerIds: string[];
  documents: Omit<ReceivedDocument, 'receivedAt'>[];
}

const LOINC = 'http://loinc.org';
const SINGLE = ['TrackingId', 'AdminRefNumber', 'AttachTo', 'PayerId', 'OrganizationId', 'ProviderId', 'MemberId'];
const KNOWN = new Set([...SINGLE, 'ServiceDate', 'Attachment', 'Final']);
const PARTS = new Set(['LineItem', 'Code', 'Content']);

const invalid = (text: string, expression: string) => new Refusal(400, outcomeOf('invalid', text, [expression]));
const unsupported = (text: string, expression: string) =>
  new Refusal(422, outcomeOf('not-supported', text, [expression]));

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** The one parameter of a name (SINGLE's are 0..1), or undefined. */
const single = (parameters: ParametersParameter[], name: string) => {
  const found = parameters.filter((parameter) => parameter.name === name);
  if (found.length > 1) throw invalid(`${name} is given more than once.`, `Parameters.parameter.where(name='${name}')`);
  return found[0];
};

const identifierValue = (parameters: ParametersParameter[], name: string) =>
  text(single(parameters, name)?.valueIdentifier?.value);

/** The bytes of a DocumentReference's first inline attachment, or a Binary's. */
const contentOf = (resource: Resource | undefined, at: string): { contentType: string; data: Buffer } => {
  if (resource?.resourceType === 'Binary') {
    if (!text(resource.data)) throw unsupported('This payer takes a Binary with its data inline.', at);
    return { contentType: resource.contentType, data: Buffer.from(resource.data!, 'base64') };
  }
  if (resource?.resourceType !== 'DocumentReference') {
    throw unsupported('This payer takes a DocumentReference or a Binary as Content.', at);
  }
  const attachment = resource.content?.[0]?.attachment;
  if (!text(attachment?.data)) {
    throw unsupported(
      'This payer takes the document inline (DocumentReference.content.attachment.data), not by URL.',
      at,
    );
  }
  return {
    contentType: attachment!.contentType ?? 'application/octet-stream',
    data: Buffer.from(attachment!.data!, 'base64'),
  };
};

const documentOf = (attachment: ParametersParameter, index: number): AttachmentSubmission['documents'][number] => {
  const at = `Parameters.parameter.where(name='Attachment')[${index}]`;
  const parts = attachment.part ?? [];
  if (parts.some((part) => !PARTS.has(part.name))) throw invalid('An Attachment has a part CDex does not define.', at);
  const lineItems = parts.filter((part) => part.name === 'LineItem').map((part) => part.valueString?.trim() ?? '');
  if (lineItems.some((item) => !/^[1-9][0-9]{0,4}$/.test(item))) {
    throw invalid('A LineItem is a claim item sequence (1, 2, …).', `${at}.part.where(name='LineItem')`);
  }
  const codes = parts.filter((part) => part.name === 'Code');
  const contents = parts.filter((part) => part.name === 'Content');
  if (codes.length > 1 || contents.length !== 1)
    throw invalid('An Attachment has one Content and at most one Code.', at);
  const code = codes[0]?.valueCodeableConcept?.coding?.find((coding) => coding?.system === LOINC)?.code ?? null;
  const { contentType, data } = contentOf(contents[0]!.resource, `${at}.part.where(name='Content')`);
  return {
    code,
    lineItems: lineItems.map(Number),
    contentType,
    size: data.length,
    sha256: createHash('sha256').update(data).digest('hex'),
  };
};

/** The submission read from the Parameters (R4-valid already), or a Refusal. */
export function attachmentSubmissionOf(body: Parameters): AttachmentSubmission {
  const parameters = body.parameter ?? [];
  const unknown = parameters.find((parameter) => !KNOWN.has(parameter.name));
  if (unknown) throw invalid(`${unknown.name} is not a parameter of $submit-attachment.`, 'Parameters.parameter');
  for (const name of SINGLE) single(parameters, name);
  const tracking = single(parameters, 'TrackingId')?.valueIdentifier;
  const trackingValue = text(tracking?.value);
  if (!trackingValue) throw invalid('TrackingId (an Identifier) is required.', 'Parameters.parameter');
  const attachTo = single(parameters, 'AttachTo')?.valueCode;
  if (attachTo !== 'claim' && attachTo !== 'preauthorization') {
    throw invalid('AttachTo is claim or preauthorization.', "Parameters.parameter.where(name='AttachTo')");
  }
  const memberId = identifierValue(parameters, 'MemberId');
  if (!memberId) throw invalid('MemberId (an Identifier) is required.', 'Parameters.parameter');
  const providerIds = ['ProviderId', 'OrganizationId'].flatMap((name) => identifierValue(parameters, name) ?? []);
  if (providerIds.length === 0) throw invalid('ProviderId or OrganizationId is required.', 'Parameters.parameter');
  const attachments = parameters.filter((parameter) => parameter.name === 'Attachment');
  if (attachments.length === 0) throw invalid('At least one Attachment is required.', 'Parameters.parameter');
  return {
    trackingId: { ...tracking, value: trackingValue },
    attachTo,
    memberId,
    providerIds,
    documents: attachments.map(documentOf),
  };
}
