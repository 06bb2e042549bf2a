import type { CodeableConcept, Coverage, Identifier, Organization, Patient, Reference } from '@medplum/fhirtypes';
import {
  codingOf,
  conceptOf,
  genderOf,
  memberIdSystem,
  OUR_SYSTEMS,
  relationshipOf,
  SELF,
  SYSTEMS,
  X12,
} from './codes.ts';
import { addressOf, listOf, optional, personNameOf, telecomOf } from './contact-details.ts';
import type { MappingContext } from './mapping-context.ts';
import { addProblem, dateOf, type Fields, fieldsOf, requiredText, textOf } from './request-fields.ts';

/*
 * The beneficiary (PASBeneficiary), the subscriber when another person holds the coverage (PASSubscriber),
 * the insurer (PASInsurer) and the Coverage (PASCoverage) of a request's `patient` and `subscriber`.
 */

export interface CoverageReferences {
  patient: Reference<Patient>;
  coverage: Reference<Coverage>;
  insurer: Reference<Organization>;
}

/** The member id as US Core and PAS slice it: type MB, the payer's system. */
const memberIdentifierOf = (mapping: MappingContext, memberId: string): Identifier => ({
  type: { coding: [codingOf(SYSTEMS.v2IdentifierType, 'MB')] },
  system: memberIdSystem(mapping.payer.payerId),
  value: memberId,
});

const patientResourceOf = (mapping: MappingContext, fields: Fields, memberId: string | null): Patient => ({
  resourceType: 'Patient',
  ...(memberId !== null ? { identifier: [memberIdentifierOf(mapping, memberId)] } : {}),
  ...optional('name', listOf(personNameOf(fields))),
  gender: genderOf(textOf(fields.genderCode)),
  ...optional('birthDate', dateOf(fields.birthDate)),
  ...optional('address', listOf(addressOf(fields))),
  ...optional('telecom', telecomOf(fields)),
});

/** The patient: the member the services are for, matched by the payer on member id, name and birth date. */
const beneficiaryOf = (mapping: MappingContext): Reference<Patient> => {
  const patient = fieldsOf(mapping.document.patient);
  const memberId = requiredText(mapping, patient, '/patient/memberId', "the patient's member id is needed");
  requiredText(mapping, patient, '/patient/lastName', "the patient's last name is needed");
  requiredText(mapping, patient, '/patient/firstName', "the patient's first name is needed");
  if (dateOf(patient.birthDate) === null) {
    addProblem(mapping, '/patient/birthDate', 'missing', "the patient's birth date (YYYY-MM-DD) is needed");
  }
  return mapping.entries.add('patient', patientResourceOf(mapping, patient, memberId));
};

const PERSON_FIELDS = ['firstName', 'lastName', 'birthDate', 'memberId'] as const;

/** Whether `subscriber` names another person than `patient`: a field both give differs. */
const isAnotherPerson = (subscriber: Fields, patient: Fields): boolean =>
  PERSON_FIELDS.some((field) => {
    const theirs = textOf(subscriber[field]);
    return theirs !== null && theirs.toUpperCase() !== (textOf(patient[field]) ?? '').toUpperCase();
  });

interface Subscription {
  subscriber?: Reference<Patient>;
  subscriberId?: string;
  relationship?: CodeableConcept;
}

/** The subscriber when another person: PASCoverage's self-beneficiary rule needs one for every other relationship. */
const otherSubscriberOf = (mapping: MappingContext, subscriber: Fields, patient: Fields): Subscription => {
  const code = textOf(patient.subscriberRelationshipCode);
  const path = '/patient/subscriberRelationshipCode';
  if (code === null) addProblem(mapping, path, 'missing', "the patient's relationship to the subscriber is needed");
  if (code === SELF) {
    addProblem(mapping, path, 'unmappable', 'the relationship says self, but the subscriber is another person');
  }
  requiredText(mapping, subscriber, '/subscriber/lastName', "the subscriber's last name is needed");
  // The card's member id when the subscriber's own is not given: the coverage is theirs.
  const memberId = textOf(subscriber.memberId) ?? textOf(patient.memberId);
  const reference = mapping.entries.add('subscriber', patientResourceOf(mapping, subscriber, memberId));
  return {
    subscriber: reference,
    ...optional('subscriberId', memberId),
    ...(code !== null ? { relationship: relationshipOf(code) } : {}),
  };
};

const subscriptionOf = (mapping: MappingContext, patientReference: Reference<Patient>): Subscription => {
  const patient = fieldsOf(mapping.document.patient);
  const subscriber = fieldsOf(mapping.document.subscriber);
  if (isAnotherPerson(subscriber, patient)) return otherSubscriberOf(mapping, subscriber, patient);
  const code = textOf(patient.subscriberRelationshipCode) ?? SELF;
  if (code !== SELF) {
    addProblem(mapping, '/subscriber', 'missing', 'the subscriber is needed when the patient is not the subscriber');
    return { relationship: relationshipOf(code) };
  }
  return {
    subscriber: patientReference,
    ...optional('subscriberId', textOf(patient.memberId)),
    relationship: relationshipOf(SELF),
  };
};

/** The payer the request names must be the one the submission goes to: PAS sends to the card's payer. */
const insurerOf = (mapping: MappingContext): Reference<Organization> => {
  const patient = fieldsOf(mapping.document.patient);
  const payerId = requiredText(mapping, patient, '/patient/PayerId', "the patient's payer id is needed");
  if (payerId !== null && payerId !== mapping.payer.payerId) {
    addProblem(mapping, '/patient/PayerId', 'unmappable', 'the payer id is not the payer this submission goes to');
  }
  const name = mapping.payer.name ?? textOf(patient.Payer);
  if (name === null) addProblem(mapping, '/patient/Payer', 'missing', "the payer's name is needed");
  const insurer: Organization = {
    resourceType: 'Organization',
    active: true,
    identifier: [
      {
        type: { coding: [codingOf(SYSTEMS.carinIdentifierType, 'payerid')] },
        system: OUR_SYSTEMS.payerId,
        value: mapping.payer.payerId,
      },
    ],
    type: [conceptOf(X12.entityIdentifier, 'PR')],
    ...optional('name', name),
  };
  return mapping.entries.add('insurer', insurer);
};

/** Beneficiary, subscriber, insurer and coverage: the Claim's patient, insurer and insurance. */
export const mapCoverage = (mapping: MappingContext): CoverageReferences => {
  const patient = beneficiaryOf(mapping);
  const insurer = insurerOf(mapping);
  const memberId = textOf(fieldsOf(mapping.document.patient).memberId);
  const coverage: Coverage = {
    resourceType: 'Coverage',
    status: 'active',
    ...(memberId !== null ? { identifier: [memberIdentifierOf(mapping, memberId)] } : {}),
    ...subscriptionOf(mapping, patient),
    beneficiary: patient,
    payor: [insurer],
  };
  return { patient, insurer, coverage: mapping.entries.add('coverage', coverage) };
};
