import type {
  Claim,
  ClaimCareTeam,
  ClaimDiagnosis,
  ClaimItem,
  ClaimSupportingInfo,
  Coverage,
  Encounter,
  Extension,
  Identifier,
  Organization,
  Patient,
  PractitionerRole,
  Reference,
} from '@medplum/fhirtypes';
import {
  claimTypeOf,
  codedExtension,
  codingOf,
  conceptOf,
  EXTENSIONS,
  OUR_SYSTEMS,
  priorityOf,
  SYSTEMS,
  X12,
} from './codes.ts';
import type { MappingContext } from './mapping-context.ts';
import { periodOf, requiredText, serviceDatesOf, textOf } from './request-fields.ts';

/*
 * The PASClaim itself: `use = preauthorization`, status active, its identifier, type and priority, the
 * level of service, and the Encounter of an admission review (X12 CL1: the admission type).
 */

/** Claim.identifier of a submission: the Bundle identifier's value, so a retry, an inquiry and an answer name it. */
export const pasClaimIdentifier = (bundleIdentifier: string): Identifier => ({
  system: OUR_SYSTEMS.claim,
  value: bundleIdentifier,
});

export interface ClaimParts {
  bundleIdentifier: string;
  submittedAt: string;
  patient: Reference<Patient>;
  insurer: Reference<Organization>;
  coverage: Reference<Coverage>;
  provider: Reference<PractitionerRole | Organization>;
  careTeam: ClaimCareTeam[];
  diagnosis: ClaimDiagnosis[];
  item: ClaimItem[];
  supportingInfo: ClaimSupportingInfo[];
}

/** An admission review's planned inpatient stay: its admission type (NUBC, X12 CL101) and dates. */
const admissionOf = (mapping: MappingContext, patient: Reference<Patient>): Extension[] => {
  if (textOf(mapping.document.requestTypeCode) !== 'AR') return [];
  const admissionType = requiredText(
    mapping,
    mapping.document,
    '/admissionTypeCode',
    'an admission review needs the admission type',
  );
  const dates = serviceDatesOf(mapping.document);
  const encounter: Encounter = {
    resourceType: 'Encounter',
    status: 'planned',
    class: codingOf(SYSTEMS.actCode, 'IMP'),
    ...(admissionType !== null ? { type: [conceptOf(SYSTEMS.nubcAdmissionType, admissionType)] } : {}),
    subject: patient,
    ...(dates !== null ? { period: periodOf(dates) } : {}),
  };
  return [{ url: EXTENSIONS.encounter, valueReference: mapping.entries.add('encounter', encounter) }];
};

export const claimOf = (mapping: MappingContext, parts: ClaimParts): Claim => {
  const document = mapping.document;
  const levelOfService = textOf(document.serviceLevelCode);
  const extension = [
    ...(levelOfService !== null ? [codedExtension(EXTENSIONS.levelOfService, X12.levelOfService, levelOfService)] : []),
    ...admissionOf(mapping, parts.patient),
  ];
  return {
    resourceType: 'Claim',
    ...(extension.length > 0 ? { extension } : {}),
    identifier: [pasClaimIdentifier(parts.bundleIdentifier)],
    status: 'active',
    type: claimTypeOf(textOf(document.requestTypeCode), textOf(document.serviceTypeCode)),
    use: 'preauthorization',
    patient: parts.patient,
    created: parts.submittedAt,
    insurer: parts.insurer,
    provider: parts.provider,
    priority: priorityOf(levelOfService),
    ...(parts.careTeam.length > 0 ? { careTeam: parts.careTeam } : {}),
    ...(parts.supportingInfo.length > 0 ? { supportingInfo: parts.supportingInfo } : {}),
    ...(parts.diagnosis.length > 0 ? { diagnosis: parts.diagnosis } : {}),
    insurance: [{ sequence: 1, focal: true, coverage: parts.coverage }],
    ...(parts.item.length > 0 ? { item: parts.item } : {}),
  };
};
