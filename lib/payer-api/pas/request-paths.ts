import type { Bundle, Claim, Coverage, PractitionerRole, Reference, Resource } from '@medplum/fhirtypes';
import { EXTENSIONS, SYSTEMS } from './codes.ts';

/*
 * Which request field each element of our PAS Bundle came from, as data (docs/payer-api.md, "From a
 * payer's error to a request field"). Two halves, both read off the Bundle itself, so a stored or rebuilt
 * Bundle translates like the one just built:
 * - the anchors the mappers wrote while mapping: an element made from one entry of a request list carries
 *   that entry's JSON Pointer as its `id` (Claim.item `/procedures/1`, Claim.diagnosis `/diagnoses/0`,
 *   Claim.careTeam `/renderingProviders/2`, a provider note, a quantity taken from the request's); and each
 *   resource's source, from the reference that brought it in (Claim.patient is `/patient`, …);
 * - the rules below: per source kind, an element path (names from the resource type, no indices; a
 *   `:url` or `:system` suffix where the element is told apart by it) → the request field, absolute
 *   (`/serviceTypeCode`) or relative to the anchor in force (`code` under `/procedures/1`). null: an element
 *   of ours, from no request field.
 */

export type SourceKind = 'claim' | 'patient' | 'coverage' | 'insurer' | 'provider' | 'encounter' | 'document';

/** A rule: a request path (absolute with `/`, else relative to the anchor), computed from the resource, or ours. */
export type PathRule = string | ((resource: Resource) => string) | null;

const address = (type: string): Record<string, PathRule> => ({
  [`${type}.address`]: 'addressLine1',
  [`${type}.address.line`]: 'addressLine1',
  [`${type}.address.city`]: 'city',
  [`${type}.address.state`]: 'stateCode',
  [`${type}.address.postalCode`]: 'postalCode',
  [`${type}.address.country`]: 'countryCode',
});

const telecom = (type: string): Record<string, PathRule> => ({
  [`${type}.telecom`]: 'phone',
  [`${type}.telecom:phone`]: 'phone',
  [`${type}.telecom:fax`]: 'fax',
  [`${type}.telecom:email`]: 'email',
});

const personName = (type: string): Record<string, PathRule> => ({
  [`${type}.name`]: 'lastName',
  [`${type}.name.family`]: 'lastName',
  [`${type}.name.given`]: 'firstName',
  [`${type}.name.suffix`]: 'suffix',
});

/** Coverage.subscriberId is the subscriber's member id when another person holds the coverage. */
const subscriberIdPath = (resource: Resource): string => {
  const coverage = resource as Coverage;
  return coverage.subscriber && coverage.subscriber.reference !== coverage.beneficiary?.reference
    ? '/subscriber/memberId'
    : '/patient/memberId';
};

const CLAIM: Record<string, PathRule> = {
  Claim: null,
  'Claim.identifier': null,
  'Claim.created': null,
  'Claim.patient': '/patient',
  'Claim.insurer': '/patient/PayerId',
  'Claim.provider': '/requestingProvider',
  'Claim.insurance': '/patient/memberId',
  'Claim.type': '/requestTypeCode',
  'Claim.priority': '/serviceLevelCode',
  [`Claim.extension:${EXTENSIONS.levelOfService}`]: '/serviceLevelCode',
  [`Claim.extension:${EXTENSIONS.encounter}`]: '/admissionTypeCode',
  'Claim.item': '/procedures',
  'Claim.item.productOrService': 'code',
  'Claim.item.productOrService.coding.system': 'qualifierCode',
  'Claim.item.quantity': 'quantity',
  'Claim.item.category': '/serviceTypeCode',
  'Claim.item.locationCodeableConcept': '/placeOfServiceCode',
  'Claim.item.servicedDate': '/fromDate',
  'Claim.item.servicedPeriod': '/fromDate',
  'Claim.item.servicedPeriod.start': '/fromDate',
  'Claim.item.servicedPeriod.end': '/toDate',
  [`Claim.item.extension:${EXTENSIONS.requestType}`]: '/requestTypeCode',
  [`Claim.item.extension:${EXTENSIONS.certificationType}`]: '/certificationTypeCode',
  'Claim.diagnosis': '/diagnoses',
  'Claim.diagnosis.diagnosisCodeableConcept': 'code',
  'Claim.diagnosis.type': 'qualifierCode',
  [`Claim.diagnosis.extension:${EXTENSIONS.diagnosisRecordedDate}`]: 'date',
  'Claim.careTeam': '/renderingProviders',
  'Claim.careTeam.provider': '',
  'Claim.careTeam.role': 'roleCode',
  'Claim.careTeam.qualification': 'specialtyCode',
  'Claim.supportingInfo.timingPeriod.end': '/toDate',
};

export const PATH_RULES: Readonly<Record<SourceKind, Readonly<Record<string, PathRule>>>> = {
  claim: CLAIM,
  patient: {
    Patient: '',
    'Patient.identifier': 'memberId',
    ...personName('Patient'),
    'Patient.birthDate': 'birthDate',
    'Patient.gender': 'genderCode',
    ...address('Patient'),
    ...telecom('Patient'),
  },
  coverage: {
    Coverage: 'memberId',
    'Coverage.identifier': 'memberId',
    'Coverage.subscriberId': subscriberIdPath,
    'Coverage.subscriber': '/subscriber',
    'Coverage.relationship': 'subscriberRelationshipCode',
    'Coverage.beneficiary': '',
    'Coverage.payor': 'PayerId',
  },
  insurer: { Organization: 'PayerId', 'Organization.identifier': 'PayerId', 'Organization.name': 'Payer' },
  provider: {
    Practitioner: '',
    'Practitioner.identifier': 'npi',
    ...personName('Practitioner'),
    ...address('Practitioner'),
    PractitionerRole: '',
    'PractitionerRole.practitioner': '',
    'PractitionerRole.organization': 'organizationName',
    'PractitionerRole.code': 'roleCode',
    'PractitionerRole.specialty': 'specialtyCode',
    ...telecom('PractitionerRole'),
    Organization: '',
    'Organization.identifier': 'npi',
    [`Organization.identifier:${SYSTEMS.ein}`]: 'taxId',
    'Organization.name': 'organizationName',
    'Organization.type': 'roleCode',
    ...address('Organization'),
    ...telecom('Organization'),
  },
  encounter: {
    Encounter: '/admissionTypeCode',
    'Encounter.type': '/admissionTypeCode',
    'Encounter.period': '/fromDate',
    'Encounter.period.start': '/fromDate',
    'Encounter.period.end': '/toDate',
  },
  document: {},
};

export interface EntrySource {
  kind: SourceKind;
  /** The request path the resource stands for ('' for the Claim and the Encounter: the request itself). */
  anchor: string;
}

/** Each entry's source, by fullUrl, from the references that brought the resource into the Bundle. */
export const entrySources = (bundle: Bundle): Map<string, EntrySource> => {
  const sources = new Map<string, EntrySource>();
  const resources = new Map((bundle.entry ?? []).map((entry) => [entry.fullUrl, entry.resource]));
  const note = (reference: Reference | undefined, kind: SourceKind, anchor: string) => {
    const url = reference?.reference;
    if (url === undefined || sources.has(url)) return;
    sources.set(url, { kind, anchor });
    const role = resources.get(url);
    if (role?.resourceType === 'PractitionerRole') {
      note((role as PractitionerRole).practitioner, kind, anchor);
      note((role as PractitionerRole).organization, kind, anchor);
    }
  };
  const first = bundle.entry?.[0];
  if (first?.resource?.resourceType !== 'Claim' || first.fullUrl === undefined) return sources;
  const claim = first.resource as Claim;
  sources.set(first.fullUrl, { kind: 'claim', anchor: '' });
  note(claim.patient, 'patient', '/patient');
  note(claim.provider, 'provider', '/requestingProvider');
  for (const member of claim.careTeam ?? []) note(member.provider, 'provider', member.id ?? '');
  note(claim.insurer, 'insurer', '/patient');
  for (const insurance of claim.insurance ?? []) {
    note(insurance.coverage, 'coverage', '/patient');
    const coverage = resources.get(insurance.coverage.reference) as Coverage | undefined;
    note(coverage?.subscriber, 'patient', '/subscriber');
  }
  const encounter = claim.extension?.find((extension) => extension.url === EXTENSIONS.encounter);
  note(encounter?.valueReference, 'encounter', '');
  for (const info of claim.supportingInfo ?? []) note(info.valueReference, 'document', '');
  return sources;
};
