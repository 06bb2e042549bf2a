import type { CodeableConcept, Coding, Extension } from '@medplum/fhirtypes';

/*
 * The code systems, extensions and X12 code translations of the PAS mapping, spelled as the PAS IG
 * (2.2.1, input/fsh/Terminology.fsh, Claim.fsh, Claim-update.fsh) binds them (docs/payer-api.md).
 */

/** An X12 005010 code list by its data element number, as the IG names them: `https://codesystem.x12.org/005010/1525`. */
const x12System = (element: number): string => `https://codesystem.x12.org/005010/${element}`;

export const X12 = {
  /** UM01 request category (AR, HS, SC). */
  requestCategory: x12System(1525),
  /** UM02 certification type (I, R, S, 1–4). */
  certificationType: x12System(1322),
  /** UM06 level of service (03, E, U). */
  levelOfService: x12System(1338),
  /** UM03 / item category: service type. */
  serviceType: x12System(1365),
  /** NM101 entity identifier codes: provider roles, the payer. */
  entityIdentifier: x12System(98),
  /** INS02 individual relationship. */
  relationship: x12System(1069),
  /** PWK01 attachment report type. */
  reportType: x12System(755),
  /** PWK02 attachment transmission. */
  transmission: x12System(756),
  /** HSD01 quantity qualifier (DY, FL, HS, MN, VS). */
  quantityQualifier: x12System(673),
} as const;

export const SYSTEMS = {
  placeOfService: 'https://www.cms.gov/Medicare/Coding/place-of-service-codes/Place_of_Service_Code_Set',
  icd10cm: 'http://hl7.org/fhir/sid/icd-10-cm',
  cpt: 'http://www.ama-assn.org/go/cpt',
  // The IG's own spelling (http): X12278RequestedServiceType names this URL, so a validator with the IG accepts it.
  hcpcs: 'http://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets',
  icd10pcs: 'http://www.cms.gov/Medicare/Coding/ICD10',
  ndc: 'http://hl7.org/fhir/sid/ndc',
  npi: 'http://hl7.org/fhir/sid/us-npi',
  /** PASOrganization's TIN slice pattern. */
  ein: 'http://terminology.hl7.org/NamingSystem/USEIN',
  nuccTaxonomy: 'http://nucc.org/provider-taxonomy',
  v2IdentifierType: 'http://terminology.hl7.org/CodeSystem/v2-0203',
  carinIdentifierType: 'http://hl7.org/fhir/us/carin-bb/CodeSystem/C4BBIdentifierType',
  claimType: 'http://terminology.hl7.org/CodeSystem/claim-type',
  processPriority: 'http://terminology.hl7.org/CodeSystem/processpriority',
  subscriberRelationship: 'http://terminology.hl7.org/CodeSystem/subscriber-relationship',
  dataAbsentReason: 'http://terminology.hl7.org/CodeSystem/data-absent-reason',
  loinc: 'http://loinc.org',
  pasTemp: 'http://hl7.org/fhir/us/davinci-pas/CodeSystem/PASTempCodes',
  nubcAdmissionType: 'https://www.nubc.org/CodeSystem/PriorityTypeOfAdmitOrVisit',
  actCode: 'http://terminology.hl7.org/CodeSystem/v3-ActCode',
  documentCategory: 'http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category',
  /** RFC 3986: the identifier's value is itself a URI (here an RFC 6920 `ni:` hash name). */
  uri: 'urn:ietf:rfc:3986',
} as const;

/*
 * Identifier systems of ours, where PAS names none we could use: the IG's `urn:trnorg:<TRN03>` needs an
 * originating company id (X12 TRN03) we have not been given, and a member id's system is the payer's to
 * name (docs/payer-api.md, "Identifiers": an open question per payer).
 */
const OURS = 'urn:service-review-api:pas';
export const OUR_SYSTEMS = {
  /** Bundle.identifier of a $submit: the submission (stable across retries of one submission). */
  submission: `${OURS}:submission`,
  /** Claim.identifier: the same value as the submission, so an inquiry or an answer names it. */
  claim: `${OURS}:claim`,
  /** Bundle.identifier and Claim.identifier of an $inquire: the inquiry itself. */
  inquiry: `${OURS}:inquiry`,
  /** The payer id of our payer directory (X12 NM108 = PI). */
  payerId: `${OURS}:payer-id`,
} as const;

/** The member id's system: per payer, since a member id means something only to the payer that issued it. */
export const memberIdSystem = (payerId: string): string => `${OURS}:payer:${encodeURIComponent(payerId)}:member-id`;

const PAS_EXTENSION = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-';
export const EXTENSIONS = {
  levelOfService: `${PAS_EXTENSION}levelOfServiceCode`,
  requestType: `${PAS_EXTENSION}serviceItemRequestType`,
  certificationType: `${PAS_EXTENSION}certificationType`,
  diagnosisRecordedDate: `${PAS_EXTENSION}diagnosisRecordedDate`,
  documentInformation: `${PAS_EXTENSION}documentInformation`,
  careTeamClaimScope: `${PAS_EXTENSION}careTeamClaimScope`,
  authorizationNumber: `${PAS_EXTENSION}authorizationNumber`,
  /** A Claim update's flag on an item or supportingInfo entry: `added` or `changed` since the replaced Claim. */
  infoChanged: `${PAS_EXTENSION}infoChanged`,
  /** A Claim update's modifier on an entry the request no longer has (spec-69). */
  infoCancelled: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/modifierextension-infoCancelled',
  /** The R5 Claim.encounter element, pre-adopted through the cross-version extension PASClaim allows. */
  encounter: 'http://hl7.org/fhir/5.0/StructureDefinition/extension-Claim.encounter',
} as const;

export const codingOf = (system: string, code: string): Coding => ({ system, code });

export const conceptOf = (system: string, code: string): CodeableConcept => ({ coding: [codingOf(system, code)] });

export const codedExtension = (url: string, system: string, code: string): Extension => ({
  url,
  valueCodeableConcept: conceptOf(system, code),
});

/** X12 INS02 → FHIR subscriber-relationship (the X12 code travels beside it, as PASCoverage slices it). */
const RELATIONSHIPS: Readonly<Record<string, string>> = { '18': 'self', '01': 'spouse', '19': 'child', '53': 'common' };
export const SELF = '18';

export const relationshipOf = (x12Code: string): CodeableConcept => ({
  coding: [
    codingOf(SYSTEMS.subscriberRelationship, RELATIONSHIPS[x12Code] ?? 'other'),
    codingOf(X12.relationship, x12Code),
  ],
});

/** X12 DMG03 → FHIR administrative gender; US Core needs one, and "unknown" is what an absent code says. */
export const genderOf = (code: string | null): 'female' | 'male' | 'unknown' => {
  if (code === 'F') return 'female';
  if (code === 'M') return 'male';
  return 'unknown';
};

/** Service types that are dental care (X12 1365): their Claim is `oral`. */
const DENTAL_SERVICE_TYPES: ReadonlySet<string> = new Set([
  '23',
  '24',
  '25',
  '26',
  '27',
  '28',
  '35',
  '36',
  '37',
  '38',
  '39',
  '40',
  '41',
]);

/**
 * Claim.type (PAS ClaimTypes: institutional, professional, oral), the high-level X12 UM mapping: an
 * admission review is an institutional request, dental service types are oral, the rest professional.
 */
export const claimTypeOf = (requestCategory: string | null, serviceType: string | null): CodeableConcept => {
  if (requestCategory === 'AR') return conceptOf(SYSTEMS.claimType, 'institutional');
  if (serviceType !== null && DENTAL_SERVICE_TYPES.has(serviceType)) return conceptOf(SYSTEMS.claimType, 'oral');
  return conceptOf(SYSTEMS.claimType, 'professional');
};

/** Whether the UM06 level of service asks for an urgent decision: emergency (03) or urgent (U). */
export const isUrgentLevel = (levelOfService: string | null) => levelOfService === '03' || levelOfService === 'U';

/** Claim.priority from the UM06 level of service: emergency and urgent are `stat`, the rest `normal`. */
export const priorityOf = (levelOfService: string | null): CodeableConcept =>
  conceptOf(SYSTEMS.processPriority, isUrgentLevel(levelOfService) ? 'stat' : 'normal');
