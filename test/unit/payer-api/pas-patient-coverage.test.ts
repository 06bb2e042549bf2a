import type { Bundle, Claim, Coverage, Organization, Patient } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import type { PasPayer } from '#lib/payer-api/pas/mapping-context';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import { holds, PAS_INVARIANTS, validationErrors } from './fhir-validation.ts';
import { demoDocument, PAYER, resolve, resourcesOf, submission } from './pas-fixtures.ts';

const MEMBER_SYSTEM = 'urn:service-review-api:pas:payer:SBX-PAYER:member-id';

const build = (change: (document: Record<string, unknown>) => void = () => {}, payer: PasPayer = PAYER) => {
  const document = demoDocument();
  change(document);
  return buildPasRequestBundle(submission(document, { payer }));
};

const partsOf = (bundle: Bundle) => {
  const claim = bundle.entry![0]!.resource as Claim;
  const coverage = resolve<Coverage>(bundle, claim.insurance[0]!.coverage);
  return {
    claim,
    coverage,
    patient: resolve<Patient>(bundle, claim.patient),
    insurer: resolve<Organization>(bundle, claim.insurer),
  };
};

const patientOf = (document: Record<string, unknown>) => document.patient as Record<string, unknown>;

describe('the beneficiary', () => {
  it('is a Patient with the member id (type MB, the payer’s system), name, gender, birth date, address and phone', () => {
    const { patient } = partsOf(build().bundle);
    expect(patient).toEqual({
      resourceType: 'Patient',
      identifier: [
        {
          type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MB' }] },
          system: MEMBER_SYSTEM,
          value: 'MBR-0001',
        },
      ],
      name: [{ family: 'Example', given: ['Avery', 'Q'], suffix: ['Jr'] }],
      gender: 'female',
      birthDate: '1980-02-29',
      address: [
        {
          line: ['1 Test Street', 'Unit 2'],
          city: 'Springfield',
          state: 'IL',
          postalCode: '62701-0001',
          country: 'US',
        },
      ],
      telecom: [{ system: 'phone', value: '2175550100' }],
    });
  });

  it.each([
    ['M', 'male'],
    ['F', 'female'],
    ['U', 'unknown'],
    [undefined, 'unknown'],
  ])('reads X12 gender %s as %s (US Core needs one)', (code, gender) => {
    const { patient } = partsOf(build((document) => (patientOf(document).genderCode = code)).bundle);
    expect(patient.gender).toBe(gender);
  });

  it.each(['memberId', 'lastName', 'firstName', 'birthDate'])('is a problem without %s', (field) => {
    const { problems, bundle } = build((document) => delete patientOf(document)[field]);
    expect(problems).toEqual([{ path: `/patient/${field}`, reason: 'missing', message: expect.any(String) }]);
    expect(validationErrors(bundle)).toEqual([]);
  });

  it('treats a birth date that is no calendar day as missing', () => {
    const { problems } = build((document) => (patientOf(document).birthDate = '1981-02-29'));
    expect(problems.map((problem) => problem.path)).toEqual(['/patient/birthDate']);
  });
});

describe('the coverage when the patient is the subscriber', () => {
  it('names the patient as subscriber and beneficiary, self in FHIR and X12 codes, the member id twice', () => {
    const { coverage, claim, insurer } = partsOf(build().bundle);
    expect(coverage).toEqual({
      resourceType: 'Coverage',
      status: 'active',
      identifier: [
        {
          type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MB' }] },
          system: MEMBER_SYSTEM,
          value: 'MBR-0001',
        },
      ],
      subscriber: claim.patient,
      subscriberId: 'MBR-0001',
      relationship: {
        coding: [
          { system: 'http://terminology.hl7.org/CodeSystem/subscriber-relationship', code: 'self' },
          { system: 'https://codesystem.x12.org/005010/1069', code: '18' },
        ],
      },
      beneficiary: claim.patient,
      payor: [claim.insurer],
    });
    expect(insurer.resourceType).toBe('Organization');
    expect(holds(PAS_INVARIANTS.selfBeneficiary, coverage)).toBe(true);
  });

  it('counts a subscriber section naming the patient again as the patient', () => {
    const { bundle, problems } = build((document) => {
      document.subscriber = { firstName: 'avery', lastName: 'EXAMPLE', memberId: 'MBR-0001' };
    });
    expect(problems).toEqual([]);
    expect(resourcesOf(bundle, 'Patient')).toHaveLength(1);
  });

  it('reads an absent relationship as self', () => {
    const { coverage, patient } = partsOf(
      build((document) => delete patientOf(document).subscriberRelationshipCode).bundle,
    );
    expect(coverage.relationship?.coding?.[1]?.code).toBe('18');
    expect(coverage.subscriber?.type).toBe(patient.resourceType);
  });

  it('is a problem when the relationship is not self and no subscriber is given', () => {
    const { problems, bundle } = build((document) => (patientOf(document).subscriberRelationshipCode = '19'));
    expect(problems).toEqual([{ path: '/subscriber', reason: 'missing', message: expect.any(String) }]);
    const { coverage } = partsOf(bundle);
    expect(holds(PAS_INVARIANTS.selfBeneficiary, coverage)).toBe(false);
  });
});

describe('the coverage when another person is the subscriber', () => {
  const dependent = (document: Record<string, unknown>) => {
    patientOf(document).subscriberRelationshipCode = '19';
    document.subscriber = {
      firstName: 'Robin',
      lastName: 'Example',
      birthDate: '1955-06-15',
      genderCode: 'M',
      memberId: 'MBR-0000',
    };
  };

  it('adds the subscriber as a Patient of their own, with their member id as subscriberId', () => {
    const { bundle, problems } = build(dependent);
    expect(problems).toEqual([]);
    expect(validationErrors(bundle)).toEqual([]);
    const { coverage, patient } = partsOf(bundle);
    const subscriber = resolve<Patient>(bundle, coverage.subscriber);
    expect(subscriber).not.toBe(patient);
    expect(subscriber).toMatchObject({
      name: [{ family: 'Example', given: ['Robin'] }],
      gender: 'male',
      birthDate: '1955-06-15',
      identifier: [{ system: MEMBER_SYSTEM, value: 'MBR-0000' }],
    });
    expect(coverage.subscriberId).toBe('MBR-0000');
    expect(coverage.identifier?.[0]?.value).toBe('MBR-0001');
    expect(coverage.relationship?.coding).toEqual([
      { system: 'http://terminology.hl7.org/CodeSystem/subscriber-relationship', code: 'child' },
      { system: 'https://codesystem.x12.org/005010/1069', code: '19' },
    ]);
    expect(holds(PAS_INVARIANTS.selfBeneficiary, coverage)).toBe(true);
  });

  it.each([
    ['01', 'spouse'],
    ['53', 'common'],
    ['G8', 'other'],
  ])('maps relationship %s to %s beside the X12 code', (code, fhir) => {
    const { coverage } = partsOf(
      build((document) => {
        dependent(document);
        patientOf(document).subscriberRelationshipCode = code;
      }).bundle,
    );
    expect(coverage.relationship?.coding?.map((coding) => coding.code)).toEqual([fhir, code]);
  });

  it('uses the card’s member id for a subscriber who has none of their own', () => {
    const { bundle } = build((document) => {
      dependent(document);
      delete (document.subscriber as Record<string, unknown>).memberId;
    });
    const { coverage } = partsOf(bundle);
    expect(coverage.subscriberId).toBe('MBR-0001');
    expect(resolve<Patient>(bundle, coverage.subscriber).identifier?.[0]?.value).toBe('MBR-0001');
  });

  it('is a problem without the relationship, with a relationship of self, or without their last name', () => {
    const missing = build((document) => {
      dependent(document);
      delete patientOf(document).subscriberRelationshipCode;
      delete (document.subscriber as Record<string, unknown>).lastName;
    }).problems;
    expect(missing.map((problem) => `${problem.reason} ${problem.path}`)).toEqual([
      'missing /patient/subscriberRelationshipCode',
      'missing /subscriber/lastName',
    ]);
    const self = build((document) => {
      dependent(document);
      patientOf(document).subscriberRelationshipCode = '18';
    }).problems;
    expect(self.map((problem) => `${problem.reason} ${problem.path}`)).toEqual([
      'unmappable /patient/subscriberRelationshipCode',
    ]);
  });
});

describe('the insurer', () => {
  it('is the payer of the submission: active, X12 PR, its payer id (PI) and the directory’s name', () => {
    const { insurer } = partsOf(build().bundle);
    expect(insurer).toEqual({
      resourceType: 'Organization',
      active: true,
      identifier: [
        {
          type: {
            coding: [{ system: 'http://hl7.org/fhir/us/carin-bb/CodeSystem/C4BBIdentifierType', code: 'payerid' }],
          },
          system: 'urn:service-review-api:pas:payer-id',
          value: 'SBX-PAYER',
        },
      ],
      type: [{ coding: [{ system: 'https://codesystem.x12.org/005010/98', code: 'PR' }] }],
      name: 'Sandbox Health Plan',
    });
  });

  it('takes the request’s payer name when the directory has none, and is a problem with neither', () => {
    const named = build((document) => (patientOf(document).Payer = 'Plan From Request'), { ...PAYER, name: null });
    expect(partsOf(named.bundle).insurer.name).toBe('Plan From Request');
    const unnamed = build((document) => delete patientOf(document).Payer, { ...PAYER, name: null });
    expect(unnamed.problems).toEqual([{ path: '/patient/Payer', reason: 'missing', message: expect.any(String) }]);
  });

  it('is a problem when the request names no payer, or another payer than the submission goes to', () => {
    expect(build((document) => delete patientOf(document).PayerId).problems).toEqual([
      { path: '/patient/PayerId', reason: 'missing', message: expect.any(String) },
    ]);
    expect(build((document) => (patientOf(document).PayerId = 'OTHER')).problems).toEqual([
      {
        path: '/patient/PayerId',
        reason: 'unmappable',
        message: 'the payer id is not the payer this submission goes to',
      },
    ]);
  });
});
