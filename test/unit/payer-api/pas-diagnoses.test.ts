import type { Claim } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import { validationErrors } from './fhir-validation.ts';
import { demoDocument, submission } from './pas-fixtures.ts';

const ICD10CM = 'http://hl7.org/fhir/sid/icd-10-cm';
const PAS_TEMP = 'http://hl7.org/fhir/us/davinci-pas/CodeSystem/PASTempCodes';

const build = (diagnoses: unknown) => {
  const document = demoDocument();
  if (diagnoses === undefined) delete document.diagnoses;
  else document.diagnoses = diagnoses;
  const { bundle, problems } = buildPasRequestBundle(submission(document));
  return { bundle, problems, diagnosis: (bundle.entry![0]!.resource as Claim).diagnosis };
};

describe('the diagnoses', () => {
  it('are ICD-10-CM codes with their dot, the principal (ABK) first, the others in the request’s order', () => {
    const { diagnosis, bundle } = build([
      { qualifierCode: 'ABF', code: 'M5416', date: '2026-03-01' },
      { qualifierCode: 'APR', code: 'r52' },
      { qualifierCode: 'ABK', code: 'M51.26' },
      { qualifierCode: 'ABJ', code: 'S32.009A' },
      { code: 'E119' },
    ]);
    expect(validationErrors(bundle)).toEqual([]);
    expect(diagnosis).toEqual([
      {
        id: '/diagnoses/2',
        sequence: 1,
        diagnosisCodeableConcept: { coding: [{ system: ICD10CM, code: 'M51.26' }] },
        type: [{ coding: [{ system: PAS_TEMP, code: 'principal' }] }],
      },
      {
        id: '/diagnoses/0',
        sequence: 2,
        extension: [
          {
            url: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-diagnosisRecordedDate',
            valueDate: '2026-03-01',
          },
        ],
        diagnosisCodeableConcept: { coding: [{ system: ICD10CM, code: 'M54.16' }] },
      },
      {
        id: '/diagnoses/1',
        sequence: 3,
        diagnosisCodeableConcept: { coding: [{ system: ICD10CM, code: 'R52' }] },
        type: [{ coding: [{ system: PAS_TEMP, code: 'patientreasonforvisit' }] }],
      },
      {
        id: '/diagnoses/3',
        sequence: 4,
        diagnosisCodeableConcept: { coding: [{ system: ICD10CM, code: 'S32.009A' }] },
        type: [{ coding: [{ system: PAS_TEMP, code: 'admitting' }] }],
      },
      { id: '/diagnoses/4', sequence: 5, diagnosisCodeableConcept: { coding: [{ system: ICD10CM, code: 'E11.9' }] } },
    ]);
  });

  it('are optional: a request without them has none and no problem', () => {
    const { diagnosis, problems } = build(undefined);
    expect(diagnosis).toBeUndefined();
    expect(problems).toEqual([]);
  });

  it('allow one principal only', () => {
    const { problems, diagnosis } = build([
      { qualifierCode: 'ABK', code: 'M51.26' },
      { qualifierCode: 'ABF', code: 'M54.16' },
      { qualifierCode: 'ABK', code: 'M54.5' },
    ]);
    expect(problems).toEqual([
      {
        path: '/diagnoses/2/qualifierCode',
        reason: 'unmappable',
        message: 'only one diagnosis can be principal (ABK)',
      },
    ]);
    expect(diagnosis?.map((entry) => entry.id)).toEqual(['/diagnoses/0', '/diagnoses/2', '/diagnoses/1']);
  });

  it('are problems when a code is missing or no ICD-10-CM code, a qualifier unknown, an entry or the list malformed', () => {
    const { problems, bundle, diagnosis } = build([
      { qualifierCode: 'ABF' },
      { qualifierCode: 'ABF', code: '250.00' },
      { qualifierCode: 'BK', code: 'M54.5' },
      42,
    ]);
    expect(problems.map((problem) => `${problem.reason} ${problem.path}`)).toEqual([
      'missing /diagnoses/0/code',
      'unmappable /diagnoses/1/code',
      'unmappable /diagnoses/2/qualifierCode',
      'unmappable /diagnoses/3',
    ]);
    expect(validationErrors(bundle)).toEqual([]);
    expect(diagnosis?.[0]?.diagnosisCodeableConcept?.coding).toEqual([
      { system: 'http://terminology.hl7.org/CodeSystem/data-absent-reason', code: 'unknown' },
    ]);
    expect(build('M54.5').problems).toEqual([
      { path: '/diagnoses', reason: 'unmappable', message: 'the diagnoses are not a list' },
    ]);
  });
});
