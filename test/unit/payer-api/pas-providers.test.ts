import type { Bundle, Claim, Organization, Practitioner, PractitionerRole } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import { validationErrors } from './fhir-validation.ts';
import { demoDocument, RENDERER_NPI, REQUESTER_NPI, resolve, resourcesOf, submission } from './pas-fixtures.ts';

const NPI_SYSTEM = 'http://hl7.org/fhir/sid/us-npi';
const X12_98 = 'https://codesystem.x12.org/005010/98';
const NUCC = 'http://nucc.org/provider-taxonomy';

const build = (change: (document: Record<string, unknown>) => void = () => {}) => {
  const document = demoDocument();
  change(document);
  return buildPasRequestBundle(submission(document));
};

const claimOf = (bundle: Bundle) => bundle.entry![0]!.resource as Claim;
const requesterOf = (document: Record<string, unknown>) => document.requestingProvider as Record<string, unknown>;

describe('the requesting provider', () => {
  it('named as a person is a PractitionerRole of their Practitioner (NPI) at their practice (NPI-less, with its TIN)', () => {
    const { bundle } = build();
    const role = resolve<PractitionerRole>(bundle, claimOf(bundle).provider);
    expect(role).toMatchObject({
      resourceType: 'PractitionerRole',
      active: true,
      code: [{ coding: [{ system: X12_98, code: '1P' }] }],
      specialty: [{ coding: [{ system: NUCC, code: '207Q00000X' }] }],
      telecom: [
        { system: 'phone', value: '2175550101' },
        { system: 'fax', value: '2175550102' },
        { system: 'email', value: 'office@example.org' },
      ],
    });
    expect(resolve<Practitioner>(bundle, role.practitioner)).toEqual({
      resourceType: 'Practitioner',
      identifier: [{ system: NPI_SYSTEM, value: REQUESTER_NPI }],
      name: [{ family: 'Doe', given: ['Jane'] }],
      address: [{ line: ['2 Clinic Road'], city: 'Springfield', state: 'IL', postalCode: '62701' }],
    });
    expect(resolve<Organization>(bundle, role.organization)).toMatchObject({
      name: 'Doe Family Practice',
      identifier: [{ system: 'http://terminology.hl7.org/NamingSystem/USEIN', value: '123456789' }],
    });
  });

  it('named as an organization is an Organization (PASRequestor): active, its X12 role, NPI and TIN', () => {
    const { bundle, problems } = build((document) => {
      const requester = requesterOf(document);
      delete requester.firstName;
      delete requester.lastName;
      requester.roleCode = 'FA';
    });
    expect(problems).toEqual([]);
    expect(validationErrors(bundle)).toEqual([]);
    expect(resolve<Organization>(bundle, claimOf(bundle).provider)).toMatchObject({
      resourceType: 'Organization',
      active: true,
      type: [{ coding: [{ system: X12_98, code: 'FA' }] }],
      name: 'Doe Family Practice',
      identifier: [
        { system: NPI_SYSTEM, value: REQUESTER_NPI },
        { system: 'http://terminology.hl7.org/NamingSystem/USEIN', value: '123456789' },
      ],
    });
  });

  it('is a problem without an NPI (the inquiry key), with one of the wrong shape, or without a name or role', () => {
    expect(build((document) => delete requesterOf(document).npi).problems).toEqual([
      { path: '/requestingProvider/npi', reason: 'missing', message: "the requesting provider's NPI is needed" },
    ]);
    expect(build((document) => (requesterOf(document).npi = '12345')).problems).toEqual([
      {
        path: '/requestingProvider/npi',
        reason: 'unmappable',
        message: "the requesting provider's NPI is not 10 digits",
      },
    ]);
    const nameless = build((document) => {
      const requester = requesterOf(document);
      for (const field of ['firstName', 'lastName', 'organizationName', 'roleCode']) delete requester[field];
    });
    expect(nameless.problems.map((problem) => `${problem.reason} ${problem.path}`)).toEqual([
      'missing /requestingProvider/lastName',
      'missing /requestingProvider/roleCode',
    ]);
    expect(validationErrors(nameless.bundle)).toEqual([]);
  });
});

describe('the rendering providers', () => {
  it('are the care team for the whole claim, in order, with their X12 role and taxonomy', () => {
    const { bundle } = build();
    const careTeam = claimOf(bundle).careTeam ?? [];
    expect(careTeam.map(({ provider, ...member }) => member)).toEqual([
      {
        id: '/renderingProviders/0',
        extension: [
          {
            url: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-careTeamClaimScope',
            valueBoolean: true,
          },
        ],
        sequence: 1,
        role: { coding: [{ system: X12_98, code: 'SJ' }] },
      },
      {
        id: '/renderingProviders/1',
        extension: [
          {
            url: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-careTeamClaimScope',
            valueBoolean: true,
          },
        ],
        sequence: 2,
        role: { coding: [{ system: X12_98, code: '72' }] },
        qualification: { coding: [{ system: NUCC, code: '208600000X' }] },
      },
    ]);
    expect(resolve<Organization>(bundle, careTeam[0]!.provider)).toMatchObject({
      resourceType: 'Organization',
      name: 'Example Imaging',
      identifier: [{ system: NPI_SYSTEM, value: RENDERER_NPI }, { value: '987654321' }],
    });
    const surgeon = resolve<PractitionerRole>(bundle, careTeam[1]!.provider);
    expect(resolve<Practitioner>(bundle, surgeon.practitioner)).toEqual({
      resourceType: 'Practitioner',
      name: [{ family: 'Surgeon', given: ['Sam'] }],
    });
  });

  it('need no NPI, but one of the wrong shape and a missing name are problems', () => {
    const { problems } = build((document) => {
      document.renderingProviders = [
        { roleCode: 'SJ', npi: 'not-an-npi', organizationName: 'X' },
        { roleCode: 'SJ', npi: RENDERER_NPI },
        'not a provider',
      ];
    });
    expect(problems.map((problem) => `${problem.reason} ${problem.path}`)).toEqual([
      'unmappable /renderingProviders/0/npi',
      'missing /renderingProviders/1/lastName',
      'unmappable /renderingProviders/2',
    ]);
  });

  it('share one Practitioner with the requester when they are the same person (one resource per NPI)', () => {
    const { bundle, problems } = build((document) => {
      document.renderingProviders = [{ roleCode: '71', npi: REQUESTER_NPI, firstName: 'Jane', lastName: 'Doe' }];
    });
    expect(problems).toEqual([]);
    const claim = claimOf(bundle);
    const requester = resolve<PractitionerRole>(bundle, claim.provider);
    const renderer = resolve<PractitionerRole>(bundle, claim.careTeam?.[0]?.provider);
    expect(renderer).not.toBe(requester);
    expect(renderer.practitioner).toEqual(requester.practitioner);
    expect(resourcesOf(bundle, 'Practitioner')).toHaveLength(1);
    expect(renderer.code?.[0]?.coding?.[0]?.code).toBe('71');
  });

  it('leave no care team when the request has none', () => {
    const { bundle } = build((document) => delete document.renderingProviders);
    expect(claimOf(bundle).careTeam).toBeUndefined();
  });
});
