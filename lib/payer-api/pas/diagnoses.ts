import type { ClaimDiagnosis } from '@medplum/fhirtypes';
import { conceptOf, EXTENSIONS, SYSTEMS } from './codes.ts';
import type { MappingContext } from './mapping-context.ts';
import { addProblem, dateOf, isFields, textOf } from './request-fields.ts';

/*
 * Claim.diagnosis: ICD-10-CM codes (X12278DiagnosisCodes), the principal one (X12 qualifier ABK) first,
 * as X12 HI01 carries it, the others in the request's order. Types are PAS's (X12278DiagnosisType).
 */

/** X12 HI qualifier → PAS diagnosis type; ABF (other) has none. */
const TYPES: Readonly<Record<string, string | null>> = {
  ABK: 'principal',
  ABJ: 'admitting',
  APR: 'patientreasonforvisit',
  ABF: null,
};

/** An ICD-10-CM code, with or without its dot. */
const ICD10CM = /^[A-Z][0-9][0-9A-Z]([0-9A-Z]{1,4})?$/;

/** FHIR writes ICD-10-CM codes with the dot after the category (M54.5); X12 sends them without. */
const dottedOf = (code: string) => (code.length > 3 ? `${code.slice(0, 3)}.${code.slice(3)}` : code);

interface Read {
  index: number;
  qualifier: string | null;
  diagnosis: Omit<ClaimDiagnosis, 'sequence'>;
}

const readDiagnosis = (mapping: MappingContext, value: unknown, index: number): Read | null => {
  const path = `/diagnoses/${index}`;
  if (!isFields(value)) {
    addProblem(mapping, path, 'unmappable', 'a diagnosis is not an object');
    return null;
  }
  const code = textOf(value.code)?.toUpperCase().replace('.', '') ?? null;
  if (code === null) addProblem(mapping, `${path}/code`, 'missing', "the diagnosis's ICD-10-CM code is needed");
  else if (!ICD10CM.test(code)) {
    addProblem(mapping, `${path}/code`, 'unmappable', "the diagnosis's code is not an ICD-10-CM code");
  }
  const qualifier = textOf(value.qualifierCode)?.toUpperCase() ?? null;
  if (qualifier !== null && !(qualifier in TYPES)) {
    addProblem(mapping, `${path}/qualifierCode`, 'unmappable', "the diagnosis's qualifier is not ABK, ABF, ABJ or APR");
  }
  const type = qualifier !== null ? TYPES[qualifier] : null;
  const recorded = dateOf(value.date);
  return {
    index,
    qualifier,
    diagnosis: {
      id: path,
      ...(recorded !== null ? { extension: [{ url: EXTENSIONS.diagnosisRecordedDate, valueDate: recorded }] } : {}),
      // A code we could not read still holds its place, so the sequence of the others is the same once fixed.
      diagnosisCodeableConcept:
        code !== null ? conceptOf(SYSTEMS.icd10cm, dottedOf(code)) : conceptOf(SYSTEMS.dataAbsentReason, 'unknown'),
      ...(type ? { type: [conceptOf(SYSTEMS.pasTemp, type)] } : {}),
    },
  };
};

export const mapDiagnoses = (mapping: MappingContext): ClaimDiagnosis[] => {
  const values = mapping.document.diagnoses;
  if (values === undefined) return [];
  if (!Array.isArray(values)) {
    addProblem(mapping, '/diagnoses', 'unmappable', 'the diagnoses are not a list');
    return [];
  }
  const read = values.flatMap((value, index) => readDiagnosis(mapping, value, index) ?? []);
  const principals = read.filter((entry) => entry.qualifier === 'ABK');
  for (const extra of principals.slice(1)) {
    addProblem(
      mapping,
      `/diagnoses/${extra.index}/qualifierCode`,
      'unmappable',
      'only one diagnosis can be principal (ABK)',
    );
  }
  const ordered = [...principals, ...read.filter((entry) => entry.qualifier !== 'ABK')];
  return ordered.map((entry, position) => ({ ...entry.diagnosis, sequence: position + 1 }));
};
