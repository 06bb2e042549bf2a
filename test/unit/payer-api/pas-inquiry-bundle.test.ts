import type { Claim, Coverage, Patient, Practitioner, PractitionerRole } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { buildPasInquiryBundle } from '#lib/payer-api/pas/inquiry-bundle';
import type { PasInquiry } from '#lib/payer-api/pas/mapping-context';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import { holds, isUuidReferenceWarning, PAS_INVARIANTS, validationIssues } from './fhir-validation.ts';
import { demoDocument, PAYER, REQUESTER_NPI, resolve, storedRequest, submission } from './pas-fixtures.ts';

const SUBMISSION_ID = submission().bundleIdentifier;

const inquiry = (overrides: Partial<PasInquiry> = {}): PasInquiry => ({
  request: storedRequest(demoDocument()),
  bundleIdentifier: '01950000-0000-7000-8000-00000000ffff',
  inquiredAt: '2026-03-03T10:00:00.000Z',
  payer: PAYER,
  claimIdentifier: SUBMISSION_ID,
  authorizationNumber: null,
  ...overrides,
});

describe('buildPasInquiryBundle', () => {
  const bundle = buildPasInquiryBundle(inquiry());
  const claim = bundle.entry![0]!.resource as Claim;

  it('is a valid collection, the inquiry’s own identifier and timestamp, the Claim first', () => {
    expect(validationIssues(bundle).filter((issue) => !isUuidReferenceWarning(issue))).toEqual([]);
    expect(holds(PAS_INVARIANTS.claimFirst, bundle)).toBe(true);
    expect(bundle).toMatchObject({
      type: 'collection',
      identifier: { system: 'urn:service-review-api:pas:inquiry', value: '01950000-0000-7000-8000-00000000ffff' },
      timestamp: '2026-03-03T10:00:00.000Z',
    });
    expect(claim).toMatchObject({ status: 'active', use: 'preauthorization', created: '2026-03-03T10:00:00.000Z' });
  });

  it('names the submitted Claim by the identifier the submission gave it', () => {
    const submitted = buildPasRequestBundle(submission()).bundle.entry![0]!.resource as Claim;
    expect(claim.identifier).toEqual(submitted.identifier);
  });

  it('sends the match keys: the member id on the Patient (MB) and the Coverage, the requester’s NPI', () => {
    const patient = resolve<Patient>(bundle, claim.patient);
    expect(patient.identifier).toEqual([
      expect.objectContaining({ type: { coding: [expect.objectContaining({ code: 'MB' })] }, value: 'MBR-0001' }),
    ]);
    const coverage = resolve<Coverage>(bundle, claim.insurance[0]!.coverage);
    expect(coverage).toMatchObject({ subscriberId: 'MBR-0001', identifier: [{ value: 'MBR-0001' }] });
    const role = resolve<PractitionerRole>(bundle, claim.provider);
    expect(resolve<Practitioner>(bundle, role.practitioner).identifier).toEqual([
      { system: 'http://hl7.org/fhir/sid/us-npi', value: REQUESTER_NPI },
    ]);
    expect(claim.careTeam?.length).toBe(2);
  });

  it('narrows by the dates of service and sends no items and no diagnoses (any service of the request matches)', () => {
    expect(claim.billablePeriod).toEqual({ start: '2026-04-01', end: '2026-04-30' });
    expect(claim.item).toBeUndefined();
    expect(claim.diagnosis).toBeUndefined();
  });

  it('carries the payer’s authorization number when known', () => {
    const numbered = buildPasInquiryBundle(inquiry({ authorizationNumber: 'AUTH0001' })).entry![0]!.resource as Claim;
    expect(numbered.extension).toEqual([
      {
        url: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-authorizationNumber',
        valueString: 'AUTH0001',
      },
    ]);
    expect(claim.extension).toBeUndefined();
  });

  it('without a submitted Claim, identifies itself', () => {
    const unsubmitted = buildPasInquiryBundle(inquiry({ claimIdentifier: null })).entry![0]!.resource as Claim;
    expect(unsubmitted.identifier).toEqual([
      { system: 'urn:service-review-api:pas:inquiry', value: '01950000-0000-7000-8000-00000000ffff' },
    ]);
  });

  it('shares no fullUrl with the submission, and is the same for the same inquiry', () => {
    const submitted = new Set(buildPasRequestBundle(submission()).bundle.entry?.map((entry) => entry.fullUrl));
    expect(bundle.entry?.some((entry) => submitted.has(entry.fullUrl))).toBe(false);
    expect(buildPasInquiryBundle(inquiry())).toEqual(bundle);
  });

  it('sends what a request has even when it lacks keys (the submission refused it), without throwing', () => {
    const document = demoDocument();
    delete (document.requestingProvider as Record<string, unknown>).npi;
    delete document.fromDate;
    delete document.toDate;
    const partial = buildPasInquiryBundle(inquiry({ request: storedRequest(document) }));
    expect((partial.entry![0]!.resource as Claim).billablePeriod).toBeUndefined();
    expect(validationIssues(partial).filter((issue) => !isUuidReferenceWarning(issue))).toEqual([]);
  });
});
