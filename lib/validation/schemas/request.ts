import { codesOf } from '../code-sets.ts';
import { DRAFT, date, enumOf, identifier, paging, text } from './common.ts';

/**
 * The Request (a prior-authorization "service review"), with X12 278 field names as JSON APIs
 * expose them. Spec rules: procedures are not validated at all (2025-04-07); patient.Payer and
 * patient.PayerId are optional (2025-07-16). Unknown properties are refused: they are typos that
 * would otherwise be dropped silently.
 */
const address = {
  addressLine1: text(55),
  addressLine2: text(55),
  city: text(30),
  stateCode: { type: 'string', pattern: '^[A-Z]{2}$', description: 'USPS state or territory code' },
  postalCode: { type: 'string', pattern: '^[0-9]{5}([0-9]{4})?$', description: 'ZIP or ZIP+4, digits only' },
  countryCode: { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' },
} as const;

const phone = { type: 'string', pattern: '^[0-9]{10}$', description: '10 digits, no punctuation' } as const;

const person = {
  firstName: text(35),
  middleName: text(25),
  lastName: text(60),
  suffix: text(10),
  birthDate: date('YYYY-MM-DD'),
  genderCode: enumOf(['F', 'M', 'U'], 'X12 DMG03: F female, M male, U unknown'),
  memberId: text(80, 'Member id on the payer card'),
  ...address,
  phone,
} as const;

const patient = {
  type: 'object',
  additionalProperties: false,
  required: ['firstName', 'lastName', 'birthDate', 'memberId'],
  properties: {
    ...person,
    subscriberRelationshipCode: { type: 'string', pattern: '^[A-Z0-9]{2}$', description: 'X12 INS02, e.g. 18 self' },
    Payer: text(100, 'Payer name (optional since 2025-07-16)'),
    PayerId: text(80, 'Payer id (optional since 2025-07-16)'),
  },
} as const;

const subscriber = {
  type: 'object',
  additionalProperties: false,
  properties: person,
} as const;

const provider = (roleDescription: string) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['roleCode'],
    // A provider is identified by its NPI or by a name.
    anyOf: [{ required: ['npi'] }, { required: ['lastName'] }, { required: ['organizationName'] }],
    properties: {
      roleCode: enumOf(codesOf('provider-role'), roleDescription),
      npi: {
        type: 'string',
        format: 'npi',
        description: 'National Provider Identifier: 10 digits with a valid check digit',
      },
      taxId: { type: 'string', pattern: '^[0-9]{9}$', description: 'EIN or SSN, 9 digits' },
      firstName: text(35),
      lastName: text(60),
      organizationName: text(60),
      specialtyCode: { type: 'string', pattern: '^[0-9]{3}[0-9A-Z]{6}X$', description: 'NUCC taxonomy code' },
      payerAssignedProviderId: text(50),
      ...address,
      phone,
      fax: phone,
      email: { type: 'string', format: 'email', maxLength: 254 },
    },
  }) as const;

const diagnosis = {
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: {
    qualifierCode: enumOf(
      ['ABK', 'ABF', 'ABJ', 'APR'],
      'X12 HI qualifier: ABK principal, ABF other, ABJ admitting, APR reason for visit (ICD-10-CM)',
    ),
    code: { type: 'string', pattern: '^[A-TV-Z][0-9][0-9A-Z](\\.?[0-9A-Z]{1,4})?$', description: 'ICD-10-CM code' },
    date: date('YYYY-MM-DD'),
  },
} as const;

const properties = {
  externalId: identifier("The client's id of this request (appointmentId in v1)"),
  requestTypeCode: enumOf(codesOf('request-category'), 'X12 UM01 request category'),
  certificationTypeCode: enumOf(codesOf('certification-type'), 'X12 UM02 certification type'),
  serviceTypeCode: enumOf(codesOf('service-type'), 'X12 1365 service type'),
  placeOfServiceCode: enumOf(codesOf('place-of-service'), 'CMS place of service'),
  admissionTypeCode: enumOf(codesOf('admission-type'), 'NUBC UB-04 FL14 type of admission'),
  serviceLevelCode: enumOf(codesOf('level-of-service'), 'X12 UM06 level of service'),
  fromDate: date('First date of service, YYYY-MM-DD'),
  toDate: date('Last date of service, YYYY-MM-DD'),
  quantity: { type: 'number', minimum: 0, maximum: 99999 },
  quantityTypeCode: {
    type: 'string',
    pattern: '^[A-Z0-9]{2}$',
    description: 'X12 HSD01, e.g. VS visits, DY days, UN units',
  },
  patient,
  subscriber,
  requestingProvider: provider('Requesting provider role (X12 entity identifier)'),
  renderingProviders: { type: 'array', maxItems: 20, items: provider('Service provider role (X12 entity identifier)') },
  diagnoses: { type: 'array', maxItems: 12, items: diagnosis },
  procedures: {
    description:
      'Not validated (since 2025-04-07): any procedures, with any subset of their properties, are stored as sent.',
  },
  providerNotes: { type: 'array', maxItems: 10, items: text(264) },
} as const;

const required = ['patient', 'requestingProvider', 'admissionTypeCode', 'serviceTypeCode', 'placeOfServiceCode'];

export const requestSchema = {
  $schema: DRAFT,
  $id: 'Request',
  title: 'Request',
  type: 'object',
  additionalProperties: false,
  required: ['externalId', ...required],
  properties,
} as const;

/** The same request where the path carries the id (v1 PUT/PATCH, v1.1 PUT): externalId is optional. */
export const requestAddressedByPathSchema = {
  ...requestSchema,
  $id: 'RequestAddressedByPath',
  title: 'Request (id in the path)',
  required,
} as const;

/**
 * Query of GET …/Requests/{externalId}/authorization/history: paging only, read as the portal-account
 * list's query is (lib/http/page-query.ts).
 */
export const authorizationHistoryQuerySchema = {
  $schema: DRAFT,
  $id: 'AuthorizationHistoryQuery',
  title: 'AuthorizationHistoryQuery',
  type: 'object',
  properties: paging,
} as const;
