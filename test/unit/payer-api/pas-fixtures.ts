import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import type { StoredRequest } from '#lib/entities/request';
import type { PasAttachment, PasSubmission } from '#lib/payer-api/pas/mapping-context';

/** Invented people and providers (no real PHI); NPIs with valid check digits. */
export const REQUESTER_NPI = '1234567893';
export const RENDERER_NPI = '1245319599';
export const PAYER = { payerId: 'SBX-PAYER', name: 'Sandbox Health Plan' } as const;

/** A complete request as a client would store it: every field the schema has, the patient the subscriber. */
export const demoDocument = (): Record<string, unknown> => ({
  requestTypeCode: 'HS',
  certificationTypeCode: 'I',
  serviceTypeCode: '2',
  placeOfServiceCode: '22',
  admissionTypeCode: '3',
  serviceLevelCode: 'E',
  fromDate: '2026-04-01',
  toDate: '2026-04-30',
  patient: {
    firstName: 'Avery',
    middleName: 'Q',
    lastName: 'Example',
    suffix: 'Jr',
    birthDate: '1980-02-29',
    genderCode: 'F',
    memberId: 'MBR-0001',
    addressLine1: '1 Test Street',
    addressLine2: 'Unit 2',
    city: 'Springfield',
    stateCode: 'IL',
    postalCode: '627010001',
    countryCode: 'US',
    phone: '2175550100',
    subscriberRelationshipCode: '18',
    Payer: 'Sandbox Health Plan',
    PayerId: PAYER.payerId,
  },
  requestingProvider: {
    roleCode: '1P',
    npi: REQUESTER_NPI,
    taxId: '123456789',
    firstName: 'Jane',
    lastName: 'Doe',
    organizationName: 'Doe Family Practice',
    specialtyCode: '207Q00000X',
    addressLine1: '2 Clinic Road',
    city: 'Springfield',
    stateCode: 'IL',
    postalCode: '62701',
    phone: '2175550101',
    fax: '2175550102',
    email: 'office@example.org',
  },
  renderingProviders: [
    { roleCode: 'SJ', organizationName: 'Example Imaging', npi: RENDERER_NPI, taxId: '987654321' },
    { roleCode: '72', firstName: 'Sam', lastName: 'Surgeon', specialtyCode: '208600000X' },
  ],
  diagnoses: [
    { qualifierCode: 'ABF', code: 'M5416', date: '2026-03-01' },
    { qualifierCode: 'ABK', code: 'M51.26' },
  ],
  procedures: [
    { qualifierCode: 'HC', code: '63030', quantity: 1 },
    { qualifierCode: 'HC', code: 'L0631', quantity: '2' },
  ],
  providerNotes: ['Conservative therapy for 8 weeks without relief.'],
});

export const storedRequest = (document: Record<string, unknown>): StoredRequest => ({
  clientId: 'client-1',
  externalId: 'REQ-1',
  document,
  authorization: { status: 'not_submitted', number: null, decisionDate: null, lastCheckedAt: null },
  version: 1,
  createdAt: '2026-03-01T08:00:00.000Z',
  updatedAt: '2026-03-01T08:00:00.000Z',
});

export const ATTACHMENT: PasAttachment = {
  attachmentId: '01950000-0000-7000-8000-000000000001',
  fileName: 'mri-report.pdf',
  contentType: 'application/pdf',
  size: 11,
  // SHA-256 of "hello world".
  sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
  createdAt: '2026-03-01T09:00:00.000Z',
  data: Buffer.from('hello world').toString('base64'),
};

export const submission = (
  document: Record<string, unknown> = demoDocument(),
  overrides: Partial<PasSubmission> = {},
): PasSubmission => ({
  request: storedRequest(document),
  bundleIdentifier: '01950000-0000-7000-8000-00000000abcd',
  submittedAt: '2026-03-02T10:00:00.000Z',
  payer: PAYER,
  attachments: [ATTACHMENT],
  ...overrides,
});

/** The resource a reference names, in the Bundle. */
export const resolve = <T extends Resource>(bundle: Bundle, reference: { reference?: string } | undefined): T => {
  const entry = bundle.entry?.find((candidate: BundleEntry) => candidate.fullUrl === reference?.reference);
  if (!entry?.resource) throw new Error(`no entry for ${reference?.reference}`);
  return entry.resource as T;
};

export const resourcesOf = <T extends Resource>(bundle: Bundle, type: T['resourceType']): T[] =>
  (bundle.entry ?? []).flatMap((entry) => (entry.resource?.resourceType === type ? [entry.resource as T] : []));
