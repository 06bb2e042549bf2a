import type { Bundle, ClaimResponse, CommunicationRequest } from '@medplum/fhirtypes';
import type { StoredClaim } from './claims.ts';
import { PAS_DOCUMENTS_MEMBER_ID } from './seed.ts';

/*
 * The documentation the payer asks for while a claim of PAS_DOCUMENTS_MEMBER_ID stays pended, as PAS
 * shapes it (CommunicationRequest.fsh, Examples.fsh): a PASCommunicationRequest per document, referenced
 * by ClaimResponse.communicationRequest and carried in the response Bundle; its payload a LOINC
 * attachment code (X12 PWK), its serviceLineNumber the item, its occurrence the date it is due by.
 */

const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';
/** Days the provider has to send the documents, from the claim's receipt. */
export const DOCUMENTS_DUE_DAYS = 14;

/** What is asked: a plan of care for the first item, and progress notes for the whole claim. */
export const REQUESTED_DOCUMENTS = [
  { loinc: '18776-5', sequence: 1, note: 'Plan of care for the requested service, signed by the ordering provider.' },
  { loinc: '11506-3', sequence: null, note: 'Progress notes from the last 60 days.' },
] as const;

const documentsDueOf = (stored: StoredClaim) =>
  new Date(Date.parse(stored.receivedAt) + DOCUMENTS_DUE_DAYS * 86_400_000).toISOString().slice(0, 10);

const requestsOf = (stored: StoredClaim): CommunicationRequest[] =>
  REQUESTED_DOCUMENTS.map((document, index) => requestOf(stored, document, index));

const requestOf = (
  stored: StoredClaim,
  document: (typeof REQUESTED_DOCUMENTS)[number],
  index: number,
): CommunicationRequest => ({
  resourceType: 'CommunicationRequest',
  id: `${stored.id}-doc-${index + 1}`,
  ...(document.sequence === null
    ? {}
    : { extension: [{ url: `${PAS}extension-serviceLineNumber`, valuePositiveInt: document.sequence }] }),
  // X12's attachment control number: the provider's answer names it.
  identifier: [{ system: 'urn:sandbox-pas:attachment-control-number', value: `${stored.pendRef}-${index + 1}` }],
  status: 'active',
  payload: [{ contentString: document.loinc }],
  occurrenceDateTime: documentsDueOf(stored),
  note: [{ text: document.note }],
  ...(stored.claim.insurer ? { requester: stored.claim.insurer } : {}),
  ...(stored.claim.provider ? { recipient: [stored.claim.provider] } : {}),
});

/**
 * Whether a document of the requested code arrived for the claim: by CDex $submit-attachment (cdex.ts), or
 * in a Claim update's supportingInfo (claim-updates.ts).
 */
const isAnswered = (stored: StoredClaim, request: CommunicationRequest) => {
  const code = request.payload?.[0]?.contentString;
  return (
    (stored.documents ?? []).some((document) => document.code === code) ||
    (code !== undefined && stored.documentCodes.includes(code))
  );
};

/**
 * The answer with the documentation requests, when the claim is of that member and still pended (a
 * decided claim asks for nothing more), less those whose documents arrived; else the answer as it is.
 */
export const withDocumentationRequests = (stored: StoredClaim, bundle: Bundle): Bundle => {
  if (stored.memberId !== PAS_DOCUMENTS_MEMBER_ID || stored.verdict !== 'pended') return bundle;
  const requests = requestsOf(stored).filter((request) => !isAnswered(stored, request));
  if (requests.length === 0) return bundle;
  const [first, ...rest] = bundle.entry ?? [];
  const claimResponse: ClaimResponse = {
    ...(first!.resource as ClaimResponse),
    communicationRequest: requests.map((request) => ({ reference: `urn:uuid:${request.id}` })),
  };
  return {
    ...bundle,
    entry: [
      { ...first, resource: claimResponse },
      ...rest,
      ...requests.map((request) => ({ fullUrl: `urn:uuid:${request.id}`, resource: request })),
    ],
  };
};
