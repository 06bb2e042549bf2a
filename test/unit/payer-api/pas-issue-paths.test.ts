import type { Bundle, Claim, OperationOutcomeIssue, PractitionerRole, Resource } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { requestPathOfIssue } from '#lib/payer-api/pas/issue-paths';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import { validationErrors } from './fhir-validation.ts';
import { demoDocument, submission } from './pas-fixtures.ts';

const CERTIFICATION = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-certificationType';

const built = (change: (document: Record<string, unknown>) => void = () => {}) => {
  const document = demoDocument();
  change(document);
  return buildPasRequestBundle(submission(document)).bundle;
};

const issue = (expression: string): OperationOutcomeIssue => ({
  severity: 'error',
  code: 'invalid',
  expression: [expression],
});
const pathOf = (bundle: Bundle, expression: string) => requestPathOfIssue(bundle, issue(expression));

const claimOf = (bundle: Bundle) => bundle.entry![0]!.resource as Claim;
/** The index of the entry a reference names. */
const entryOf = (bundle: Bundle, reference: { reference?: string } | undefined) =>
  (bundle.entry ?? []).findIndex((entry) => entry.fullUrl === reference?.reference);
/** The Practitioner of the PractitionerRole at an entry. */
const practitionerOf = (bundle: Bundle, roleEntry: number) =>
  entryOf(bundle, (bundle.entry![roleEntry]!.resource as PractitionerRole).practitioner);
const entryWhere = (bundle: Bundle, test: (resource: Resource) => boolean) =>
  (bundle.entry ?? []).findIndex((entry) => entry.resource !== undefined && test(entry.resource));

describe('requestPathOfIssue: the Claim', () => {
  const bundle = built();

  it.each([
    ['Bundle.entry[0].resource.item[1].productOrService', '/procedures/1/code'],
    ['Bundle.entry[0].resource.item[1].productOrService.coding[0].code', '/procedures/1/code'],
    ['Bundle.entry[0].resource.item[1].productOrService.coding[0].system', '/procedures/1/qualifierCode'],
    ['Bundle.entry[0].resource.item[0].quantity.value', '/procedures/0/quantity'],
    ['Bundle.entry[0].resource.item[1]', '/procedures/1'],
    ['Bundle.entry[0].resource.item[0].category', '/serviceTypeCode'],
    ['Bundle.entry[0].resource.item[1].locationCodeableConcept.coding[0].code', '/placeOfServiceCode'],
    ['Bundle.entry[0].resource.item[0].servicedPeriod.end', '/toDate'],
    ['Bundle.entry[0].resource.item[0].servicedPeriod', '/fromDate'],
    ['Bundle.entry[0].resource.item[0].extension[0]', '/requestTypeCode'],
    ['Bundle.entry[0].resource.item[0].extension[1].valueCodeableConcept', '/certificationTypeCode'],
    [`Claim.item[1].extension('${CERTIFICATION}').value.ofType(CodeableConcept)`, '/certificationTypeCode'],
    ['Claim.item[1].productOrService', '/procedures/1/code'],
    ['Bundle.entry[0].resource.ofType(Claim).item[0].productOrService', '/procedures/0/code'],
    ['Claim.item.productOrService', '/procedures'],
    // The principal diagnosis was the request's second: it went first.
    ['Bundle.entry[0].resource.diagnosis[0].diagnosisCodeableConcept', '/diagnoses/1/code'],
    ['Claim.diagnosis[1].extension[0].valueDate', '/diagnoses/0/date'],
    ['Claim.diagnosis[1].type', '/diagnoses/0/qualifierCode'],
    ['Claim.careTeam[1].role', '/renderingProviders/1/roleCode'],
    ['Claim.careTeam[0].provider', '/renderingProviders/0'],
    ['Claim.supportingInfo[1].valueString', '/providerNotes/0'],
    ['Claim.supportingInfo[0].timingPeriod.end', '/toDate'],
    ['Claim.extension[0]', '/serviceLevelCode'],
    ['Claim.priority', '/serviceLevelCode'],
    ['Claim.type', '/requestTypeCode'],
    ['Claim.provider', '/requestingProvider'],
    ['Claim.insurer', '/patient/PayerId'],
    ['Claim.patient', '/patient'],
  ])('%s → %s', (expression, path) => {
    expect(pathOf(bundle, expression)).toBe(path);
  });

  it.each([
    'Claim.identifier[0].value',
    'Claim.created',
    'Claim.use',
    'Claim',
    'Claim.supportingInfo[2].valueReference', // an attachment: not a field of the request
    'Claim.item[7].productOrService', // no such item
    'Bundle.entry[99].resource.name',
    'Bundle.timestamp',
    'entry.where(resource is Claim)',
    'Observation.code',
    '',
  ])('%s → null', (expression) => {
    expect(pathOf(bundle, expression)).toBeNull();
  });

  it('reads an R4 XPath location (1-based) when there is no expression', () => {
    const located: OperationOutcomeIssue = {
      severity: 'error',
      code: 'invalid',
      location: ['/f:Bundle/f:entry[1]/f:resource/f:Claim/f:item[2]/f:productOrService'],
    };
    expect(requestPathOfIssue(bundle, located)).toBe('/procedures/1/code');
  });

  it('takes the first expression that maps, and is null for an issue naming nothing', () => {
    const several: OperationOutcomeIssue = {
      severity: 'error',
      code: 'invalid',
      expression: ['Claim.created', 'Claim.item[0].category'],
    };
    expect(requestPathOfIssue(bundle, several)).toBe('/serviceTypeCode');
    expect(requestPathOfIssue(bundle, { severity: 'error', code: 'invalid' })).toBeNull();
  });
});

describe('requestPathOfIssue: the resources besides the Claim', () => {
  const bundle = built();
  const claim = claimOf(bundle);
  const patient = entryOf(bundle, claim.patient);
  const coverage = entryOf(bundle, claim.insurance[0]?.coverage);
  const insurer = entryOf(bundle, claim.insurer);
  const requesterRole = entryOf(bundle, claim.provider);
  const requester = practitionerOf(bundle, requesterRole);
  const imaging = entryOf(bundle, claim.careTeam?.[0]?.provider);
  const surgeonRole = entryOf(bundle, claim.careTeam?.[1]?.provider);
  const surgeon = practitionerOf(bundle, surgeonRole);
  const document = entryWhere(bundle, (resource) => resource.resourceType === 'DocumentReference');

  it.each([
    [`Bundle.entry[${patient}].resource.birthDate`, '/patient/birthDate'],
    [`Bundle.entry[${patient}].resource.identifier[0].value`, '/patient/memberId'],
    [`Bundle.entry[${patient}].resource.name[0].given[0]`, '/patient/firstName'],
    [`Bundle.entry[${patient}].resource.address[0].postalCode`, '/patient/postalCode'],
    [`Bundle.entry[${patient}].resource`, '/patient'],
    ['Patient.gender', '/patient/genderCode'],
    [`Bundle.entry[${coverage}].resource.subscriberId`, '/patient/memberId'],
    [`Bundle.entry[${coverage}].resource.relationship`, '/patient/subscriberRelationshipCode'],
    ['Coverage.payor[0]', '/patient/PayerId'],
    [`Bundle.entry[${insurer}].resource.name`, '/patient/Payer'],
    // The IG's own error path form (ClaimResponse.error.extension[errorPath]).
    [`Bundle.entry[${insurer}].Organization.name`, '/patient/Payer'],
    [`Bundle.entry[${requester}].resource.identifier[0].value`, '/requestingProvider/npi'],
    [`Bundle.entry[${requester}].resource.name[0].family`, '/requestingProvider/lastName'],
    [`Bundle.entry[${requesterRole}].resource.telecom[1].value`, '/requestingProvider/fax'],
    [`Bundle.entry[${requesterRole}].resource.specialty[0]`, '/requestingProvider/specialtyCode'],
    [`Bundle.entry[${imaging}].resource.identifier[1].value`, '/renderingProviders/0/taxId'],
    [`Bundle.entry[${imaging}].resource.name`, '/renderingProviders/0/organizationName'],
    [`Bundle.entry[${surgeon}].resource.name[0].family`, '/renderingProviders/1/lastName'],
    [`/f:Bundle/f:entry[${surgeonRole + 1}]/f:resource/f:PractitionerRole/f:code[1]`, '/renderingProviders/1/roleCode'],
  ])('%s → %s', (expression, path) => {
    expect(pathOf(bundle, expression)).toBe(path);
  });

  it('is null when the IG’s form names another type than the entry holds', () => {
    expect(pathOf(bundle, `Bundle.entry[${insurer}].Patient.name`)).toBeNull();
  });

  it('is null for an attachment’s DocumentReference: it is no field of the request', () => {
    expect(pathOf(bundle, `Bundle.entry[${document}].resource.content[0].attachment.data`)).toBeNull();
  });

  it('tells the subscriber from the patient, and refuses a resource-rooted path two patients share', () => {
    const dependent = built((document) => {
      (document.patient as Record<string, unknown>).subscriberRelationshipCode = '01';
      document.subscriber = { firstName: 'Robin', lastName: 'Example', memberId: 'MBR-0000' };
    });
    const theClaim = claimOf(dependent);
    const theCoverage = entryOf(dependent, theClaim.insurance[0]?.coverage);
    const subscriber = entryWhere(
      dependent,
      (resource) => resource.resourceType === 'Patient' && resource.name?.[0]?.given?.[0] === 'Robin',
    );
    expect(pathOf(dependent, `Bundle.entry[${subscriber}].resource.name[0].family`)).toBe('/subscriber/lastName');
    expect(pathOf(dependent, `Bundle.entry[${theCoverage}].resource.subscriberId`)).toBe('/subscriber/memberId');
    expect(pathOf(dependent, `Bundle.entry[${theCoverage}].resource.subscriber`)).toBe('/subscriber');
    expect(pathOf(dependent, 'Patient.birthDate')).toBeNull();
  });

  it('reads a quantity taken from the request’s, and an admission review’s Encounter', () => {
    const lone = built((document) => {
      document.procedures = [{ qualifierCode: 'HC', code: '97110' }];
      document.quantity = 12;
      document.quantityTypeCode = 'VS';
      document.requestTypeCode = 'AR';
    });
    expect(pathOf(lone, 'Claim.item[0].quantity.value')).toBe('/quantity');
    expect(pathOf(lone, 'Encounter.type[0]')).toBe('/admissionTypeCode');
    expect(pathOf(lone, 'Encounter.period.end')).toBe('/toDate');
  });
});

describe('requestPathOfIssue: what a validator answers', () => {
  it('translates the FHIR validator’s own issues about the Bundle we sent, after a JSON round trip', () => {
    const bundle: Bundle = JSON.parse(JSON.stringify(built()));
    const broken: Bundle = structuredClone(bundle);
    const claim = claimOf(broken);
    delete (claim.item![1] as Partial<NonNullable<Claim['item']>[number]>).productOrService;
    const patient = broken.entry![entryOf(broken, claim.patient)]!.resource as { birthDate?: string };
    patient.birthDate = '1980-02-30';
    const errors = validationErrors(broken);
    expect(errors.length).toBe(2);
    expect(errors.map((error) => requestPathOfIssue(bundle, error)).sort()).toEqual([
      '/patient/birthDate',
      '/procedures/1/code',
    ]);
  });
});
