import type { Bundle, Claim, Reference } from '@medplum/fhirtypes';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import {
  holds,
  isUuidReferenceWarning,
  PAS_INVARIANTS,
  validationErrors,
  validationIssues,
} from './fhir-validation.ts';
import { demoDocument, PAYER, resolve, submission } from './pas-fixtures.ts';

const claimOf = (bundle: Bundle) => bundle.entry![0]!.resource as Claim;

/** Every `reference` anywhere in the Bundle. */
const referencesIn = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.flatMap(referencesIn);
  if (typeof value !== 'object' || value === null) return [];
  const own = typeof (value as Reference).reference === 'string' ? [(value as Reference).reference!] : [];
  return [...own, ...Object.values(value).flatMap(referencesIn)];
};

describe('buildPasRequestBundle: a full request', () => {
  const { bundle, problems } = buildPasRequestBundle(submission());

  it('has no problems and is valid FHIR R4: no error, and no warning but urn:uuid references', () => {
    expect(problems).toEqual([]);
    expect(validationErrors(bundle)).toEqual([]);
    expect(validationIssues(bundle).filter((issue) => !isUuidReferenceWarning(issue))).toEqual([]);
  });

  it('is a collection with the submission as identifier and timestamp, the Claim first', () => {
    expect(bundle).toMatchObject({
      resourceType: 'Bundle',
      type: 'collection',
      identifier: { value: '01950000-0000-7000-8000-00000000abcd' },
      timestamp: '2026-03-02T10:00:00.000Z',
    });
    expect(holds(PAS_INVARIANTS.claimFirst, bundle)).toBe(true);
    expect(claimOf(bundle)).toMatchObject({
      status: 'active',
      use: 'preauthorization',
      created: '2026-03-02T10:00:00.000Z',
      identifier: [{ value: '01950000-0000-7000-8000-00000000abcd' }],
      type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/claim-type', code: 'professional' }] },
      priority: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/processpriority', code: 'normal' }] },
      insurance: [{ sequence: 1, focal: true }],
    });
  });

  it('carries the level of service as PAS codes it (X12 1338, on the Claim)', () => {
    expect(claimOf(bundle).extension).toEqual([
      {
        url: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-levelOfServiceCode',
        valueCodeableConcept: { coding: [{ system: 'https://codesystem.x12.org/005010/1338', code: 'E' }] },
      },
    ]);
  });

  it('holds every referenced resource exactly once, under unique urn:uuid fullUrls, and nothing unreferenced', () => {
    const fullUrls = (bundle.entry ?? []).map((entry) => entry.fullUrl);
    expect(new Set(fullUrls).size).toBe(fullUrls.length);
    for (const fullUrl of fullUrls)
      expect(fullUrl).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const referenced = new Set(referencesIn(bundle));
    for (const reference of referenced) expect(fullUrls).toContain(reference);
    expect(fullUrls.slice(1).every((fullUrl) => referenced.has(fullUrl!))).toBe(true);
    expect((bundle.entry ?? []).map((entry) => entry.resource?.resourceType).sort()).toEqual(
      [
        'Claim',
        'Coverage',
        'DocumentReference',
        'Organization', // insurer
        'Organization', // requester's practice
        'Organization', // Example Imaging
        'Patient',
        'Practitioner', // requester
        'Practitioner', // Sam Surgeon
        'PractitionerRole',
        'PractitionerRole',
      ].sort(),
    );
  });

  it('names each reference with its type', () => {
    const claim = claimOf(bundle);
    for (const reference of [claim.patient, claim.insurer, claim.provider, claim.insurance[0]?.coverage]) {
      expect(reference?.type).toBe(resolve(bundle, reference).resourceType);
    }
  });

  it('is the same Bundle for the same submission, and shares no fullUrl with another submission', () => {
    expect(buildPasRequestBundle(submission()).bundle).toEqual(bundle);
    const other = buildPasRequestBundle(submission(demoDocument(), { bundleIdentifier: 'another' })).bundle;
    const ours = new Set((bundle.entry ?? []).map((entry) => entry.fullUrl));
    expect((other.entry ?? []).some((entry) => ours.has(entry.fullUrl))).toBe(false);
  });

  it('survives a JSON round trip unchanged (what a stored dry run holds)', () => {
    expect(JSON.parse(JSON.stringify(bundle))).toEqual(bundle);
  });
});

describe('buildPasRequestBundle: the sandbox demo request (local/seed.ts)', () => {
  const seeded = {
    admissionTypeCode: '3',
    serviceTypeCode: '1',
    placeOfServiceCode: '11',
    fromDate: '2026-03-02',
    toDate: '2026-03-02',
    patient: {
      firstName: 'Pat',
      lastName: 'Demo',
      birthDate: '1970-01-01',
      memberId: 'SBX-000101',
      Payer: 'Sandbox Health Plan',
      PayerId: PAYER.payerId,
    },
    requestingProvider: { roleCode: '1P', npi: '1234567893', lastName: 'Doe', firstName: 'Jane' },
    renderingProviders: [{ roleCode: 'SJ', organizationName: 'Example Imaging' }],
    diagnoses: [{ qualifierCode: 'ABK', code: 'M54.5' }],
    procedures: [{ qualifierCode: 'HC', code: '72148', quantity: 1 }],
  };

  it('lacks only the request category, which PAS requires per item', () => {
    const { bundle, problems } = buildPasRequestBundle(submission(seeded, { attachments: [] }));
    expect(problems).toEqual([
      { path: '/requestTypeCode', reason: 'missing', message: 'the request category (X12 UM01) is needed' },
    ]);
    expect(validationErrors(bundle)).toEqual([]);
  });

  it('with a request category, maps without a problem to a valid Bundle', () => {
    const { bundle, problems } = buildPasRequestBundle(
      submission({ ...seeded, requestTypeCode: 'HS' }, { attachments: [] }),
    );
    expect(problems).toEqual([]);
    expect(validationErrors(bundle)).toEqual([]);
  });
});

describe('buildPasRequestBundle: a request with problems', () => {
  it('lists every problem at once and still builds a best-effort Bundle', () => {
    const document = demoDocument();
    const patient = document.patient as Record<string, unknown>;
    delete patient.memberId;
    delete patient.PayerId;
    (document.requestingProvider as Record<string, unknown>).npi = undefined;
    document.procedures = [
      { qualifierCode: 'HC', code: '63030' },
      { code: '99213' },
      { qualifierCode: 'ZZ', code: 'X' },
    ];
    const { bundle, problems } = buildPasRequestBundle(submission(document));
    expect(problems.map((problem) => `${problem.reason} ${problem.path}`)).toEqual([
      'missing /patient/memberId',
      'missing /patient/PayerId',
      'missing /requestingProvider/npi',
      'missing /procedures/1/qualifierCode',
      'unmappable /procedures/2/qualifierCode',
    ]);
    expect(validationErrors(bundle)).toEqual([]);
    expect(claimOf(bundle).item).toHaveLength(3);
  });

  it('never throws, whatever the stored document holds, and its problems name paths, never values', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.anything()), fc.anything(), (document, procedures) => {
        const { bundle, problems } = buildPasRequestBundle(
          submission({ ...document, procedures, patient: { lastName: 'Zyxwvutsrq', memberId: 'QQQ-SECRET-9' } }),
        );
        expect(bundle.entry?.[0]?.resource?.resourceType).toBe('Claim');
        for (const problem of problems) {
          expect(problem.path).toMatch(/^\/[A-Za-z0-9/]*$/);
          expect(problem.message).not.toMatch(/Zyxwvutsrq|QQQ-SECRET-9/);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('sends no DocumentReference and no additional information for a request without attachments', () => {
    const { bundle } = buildPasRequestBundle(submission(demoDocument(), { attachments: [] }));
    expect((bundle.entry ?? []).some((entry) => entry.resource?.resourceType === 'DocumentReference')).toBe(false);
    const categories = claimOf(bundle).supportingInfo?.map((info) => info.category.coding?.[0]?.code);
    expect(categories).toEqual(['patientEvent', 'freeFormMessage']);
  });
});
