import type { Claim, ClaimItem } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import { validationErrors } from './fhir-validation.ts';
import { demoDocument, submission } from './pas-fixtures.ts';

const EXTENSION = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-';
const CPT = 'http://www.ama-assn.org/go/cpt';
const HCPCS = 'http://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets';
const UNKNOWN = { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/data-absent-reason', code: 'unknown' }] };

const build = (change: (document: Record<string, unknown>) => void) => {
  const document = demoDocument();
  change(document);
  const { bundle, problems } = buildPasRequestBundle(submission(document));
  const claim = bundle.entry![0]!.resource as Claim;
  return { bundle, problems, claim, items: claim.item ?? [] };
};

const withProcedures = (procedures: unknown) => build((document) => (document.procedures = procedures));

const onlyItem = (procedure: Record<string, unknown>): { item: ClaimItem; problems: string[] } => {
  const { items, problems } = withProcedures([procedure]);
  return { item: items[0]!, problems: problems.map((problem) => `${problem.reason} ${problem.path}`) };
};

describe('an item per procedure', () => {
  it('carries the request category, certification type, service type, place of service and dates as PAS codes them', () => {
    const { items, bundle } = build(() => {});
    expect(validationErrors(bundle)).toEqual([]);
    expect(items).toEqual([
      {
        id: '/procedures/0',
        sequence: 1,
        extension: [
          {
            url: `${EXTENSION}serviceItemRequestType`,
            valueCodeableConcept: { coding: [{ system: 'https://codesystem.x12.org/005010/1525', code: 'HS' }] },
          },
          {
            url: `${EXTENSION}certificationType`,
            valueCodeableConcept: { coding: [{ system: 'https://codesystem.x12.org/005010/1322', code: 'I' }] },
          },
        ],
        category: { coding: [{ system: 'https://codesystem.x12.org/005010/1365', code: '2' }] },
        locationCodeableConcept: {
          coding: [
            {
              system: 'https://www.cms.gov/Medicare/Coding/place-of-service-codes/Place_of_Service_Code_Set',
              code: '22',
            },
          ],
        },
        servicedPeriod: { start: '2026-04-01', end: '2026-04-30' },
        productOrService: { coding: [{ system: CPT, code: '63030' }] },
        quantity: { value: 1, unit: 'Units', system: 'https://codesystem.x12.org/005010/673', code: 'FL' },
      },
      expect.objectContaining({
        id: '/procedures/1',
        sequence: 2,
        productOrService: { coding: [{ system: HCPCS, code: 'L0631' }] },
        quantity: expect.objectContaining({ value: 2, code: 'FL' }),
      }),
    ]);
  });

  it.each([
    [{ qualifierCode: 'HC', code: '99213' }, CPT, '99213'],
    [{ qualifierCode: 'HC', code: '0042T' }, CPT, '0042T'],
    [{ qualifierCode: 'HC', code: '3074F' }, CPT, '3074F'],
    [{ qualifierCode: 'hc', code: 'e1390' }, HCPCS, 'E1390'],
    [{ qualifierCode: 'HC', code: 'J1745' }, HCPCS, 'J1745'],
    [{ qualifierCode: 'N4', code: '00002143380' }, 'http://hl7.org/fhir/sid/ndc', '00002143380'],
    [{ qualifierCode: 'N4', code: '0777-3105-02' }, 'http://hl7.org/fhir/sid/ndc', '0777-3105-02'],
    [{ qualifierCode: 'BBR', code: '0SR9019' }, 'http://www.cms.gov/Medicare/Coding/ICD10', '0SR9019'],
    [{ qualifierCode: 'BBQ', code: '0sg00a0' }, 'http://www.cms.gov/Medicare/Coding/ICD10', '0SG00A0'],
  ])('codes %j in %s', (procedure, system, code) => {
    const { item, problems } = onlyItem(procedure);
    expect(problems).toEqual([]);
    expect(item.productOrService).toEqual({ coding: [{ system, code }] });
  });

  it.each([
    [{ qualifierCode: 'HC', code: '9921' }, 'unmappable /procedures/0/code'],
    [{ qualifierCode: 'HC', code: '0SR9019' }, 'unmappable /procedures/0/code'],
    [{ qualifierCode: 'N4', code: '123' }, 'unmappable /procedures/0/code'],
    [{ qualifierCode: 'BBR', code: '0SR901I' }, 'unmappable /procedures/0/code'],
    [{ qualifierCode: 'ZZ', code: '99213' }, 'unmappable /procedures/0/qualifierCode'],
    [{ qualifierCode: 'AD', code: 'D0120' }, 'unmappable /procedures/0/qualifierCode'],
    [{ qualifierCode: 'BR', code: '81.51' }, 'unmappable /procedures/0/qualifierCode'],
    [{ code: '99213' }, 'missing /procedures/0/qualifierCode'],
    [{ qualifierCode: 'HC', code: '  ' }, 'missing /procedures/0/code'],
  ])('refuses %j: %s, holding the item’s place as unknown', (procedure, problem) => {
    const { item, problems } = onlyItem(procedure);
    expect(problems).toEqual([problem]);
    expect(item.productOrService).toEqual(UNKNOWN);
  });

  it('says why in words of ours, never the request’s code', () => {
    const { problems } = withProcedures([
      { qualifierCode: 'ZZ', code: 'SECRET-1' },
      { qualifierCode: 'HC', code: 'SECRET2' },
    ]);
    expect(problems.map((problem) => problem.message)).toEqual([
      "the procedure's qualifier names no code system PAS accepts (one of HC, N4, BBR, BBQ)",
      "the procedure's code is not a CPT code (5 characters, digits first) or an HCPCS level II code (a letter and 4 digits)",
    ]);
  });

  it('are a problem when there are none, and when the procedures are no list or an entry no object', () => {
    for (const none of [undefined, []]) {
      const { problems, items } = withProcedures(none);
      expect(problems).toEqual([{ path: '/procedures', reason: 'missing', message: expect.any(String) }]);
      expect(items).toEqual([]);
    }
    expect(withProcedures({ qualifierCode: 'HC' }).problems.map((problem) => problem.path)).toEqual(['/procedures']);
    const mixed = withProcedures([null, { qualifierCode: 'HC', code: '99213' }]);
    expect(mixed.problems.map((problem) => `${problem.reason} ${problem.path}`)).toEqual(['unmappable /procedures/0']);
    expect(mixed.items.map((item) => [item.id, item.sequence])).toEqual([['/procedures/1', 2]]);
  });
});

describe('quantities', () => {
  it.each([0, -1, 'two', '1e3', 100000])('refuses a procedure quantity of %j', (quantity) => {
    const { item, problems } = onlyItem({ qualifierCode: 'HC', code: '99213', quantity });
    expect(problems).toEqual(['unmappable /procedures/0/quantity']);
    expect(item.quantity).toBeUndefined();
  });

  it('gives a lone procedure without its own quantity the request’s, in the request’s HSD01 unit', () => {
    const base = { qualifierCode: 'HC', code: '97110' };
    const visits = build((document) => {
      document.procedures = [base];
      document.quantity = 12;
      document.quantityTypeCode = 'VS';
    });
    expect(visits.items[0]?.quantity).toEqual({
      id: '/quantity',
      value: 12,
      unit: 'Visits',
      system: 'https://codesystem.x12.org/005010/673',
      code: 'VS',
    });
    const units = build((document) => {
      document.procedures = [base];
      document.quantity = 3;
      document.quantityTypeCode = 'UN';
    });
    expect(units.items[0]?.quantity).toMatchObject({ value: 3, code: 'FL' });
    const several = build((document) => {
      document.procedures = [base, base];
      document.quantity = 3;
    });
    expect(several.items.map((item) => item.quantity)).toEqual([undefined, undefined]);
    const unknownType = build((document) => {
      document.procedures = [base];
      document.quantity = 3;
      document.quantityTypeCode = 'XX';
    });
    expect(unknownType.problems.map((problem) => problem.path)).toEqual(['/quantityTypeCode']);
  });
});

describe('the request’s service line on every item', () => {
  it('dates: one day is a servicedDate, a range a servicedPeriod, none nothing; an inverted range is a problem', () => {
    const oneDay = build((document) => (document.toDate = document.fromDate));
    expect(oneDay.items[0]).toMatchObject({ servicedDate: '2026-04-01' });
    expect(oneDay.items[0]?.servicedPeriod).toBeUndefined();
    const noDates = build((document) => {
      delete document.fromDate;
      delete document.toDate;
    });
    expect(noDates.items[0]?.servicedDate ?? noDates.items[0]?.servicedPeriod).toBeUndefined();
    const inverted = build((document) => (document.toDate = '2026-03-01'));
    expect(inverted.problems).toEqual([
      { path: '/toDate', reason: 'unmappable', message: 'the last date of service is before the first' },
    ]);
  });

  it.each(['requestTypeCode', 'serviceTypeCode', 'placeOfServiceCode'])('is a problem, once, without %s', (field) => {
    const { problems, bundle } = build((document) => delete document[field]);
    expect(problems).toEqual([{ path: `/${field}`, reason: 'missing', message: expect.any(String) }]);
    expect(validationErrors(bundle)).toEqual([]);
  });

  it('certification type: initial when the request says none; a cancellation is refused (it is an update)', () => {
    const initial = build((document) => delete document.certificationTypeCode);
    expect(initial.problems).toEqual([]);
    expect(initial.items[0]?.extension?.[1]?.valueCodeableConcept?.coding?.[0]?.code).toBe('I');
    const renewal = build((document) => (document.certificationTypeCode = 'R'));
    expect(renewal.items[0]?.extension?.[1]?.valueCodeableConcept?.coding?.[0]?.code).toBe('R');
    expect(build((document) => (document.certificationTypeCode = '3')).problems.map((problem) => problem.path)).toEqual(
      ['/certificationTypeCode'],
    );
  });

  it('an immediate appeal needs its level of service (the IG’s ImmediateLevelOfCare)', () => {
    const { problems } = build((document) => {
      document.certificationTypeCode = '1';
      delete document.serviceLevelCode;
    });
    expect(problems).toEqual([{ path: '/serviceLevelCode', reason: 'missing', message: expect.any(String) }]);
    expect(build((document) => (document.certificationTypeCode = '1')).problems).toEqual([]);
  });

  it('claim type and priority follow the request category, service type and level of service', () => {
    const typeOf = (claim: Claim) => claim.type.coding?.[0]?.code;
    const priorityOf = (claim: Claim) => claim.priority.coding?.[0]?.code;
    expect(typeOf(build(() => {}).claim)).toBe('professional');
    expect(typeOf(build((document) => (document.serviceTypeCode = '35')).claim)).toBe('oral');
    expect(priorityOf(build((document) => (document.serviceLevelCode = 'U')).claim)).toBe('stat');
    expect(priorityOf(build((document) => (document.serviceLevelCode = '03')).claim)).toBe('stat');
    expect(priorityOf(build((document) => delete document.serviceLevelCode).claim)).toBe('normal');
  });
});

describe('an admission review (AR)', () => {
  it('is an institutional Claim with the planned stay as an Encounter: admission type (NUBC) and dates', () => {
    const { claim, bundle, problems } = build((document) => (document.requestTypeCode = 'AR'));
    expect(problems).toEqual([]);
    expect(validationErrors(bundle)).toEqual([]);
    expect(claim.type.coding?.[0]?.code).toBe('institutional');
    const reference = claim.extension?.find(
      (extension) => extension.url === 'http://hl7.org/fhir/5.0/StructureDefinition/extension-Claim.encounter',
    )?.valueReference;
    expect(bundle.entry?.find((entry) => entry.fullUrl === reference?.reference)?.resource).toEqual({
      resourceType: 'Encounter',
      status: 'planned',
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'IMP' },
      type: [{ coding: [{ system: 'https://www.nubc.org/CodeSystem/PriorityTypeOfAdmitOrVisit', code: '3' }] }],
      subject: claim.patient,
      period: { start: '2026-04-01', end: '2026-04-30' },
    });
    const untyped = build((document) => {
      document.requestTypeCode = 'AR';
      delete document.admissionTypeCode;
    });
    expect(untyped.problems.map((problem) => problem.path)).toEqual(['/admissionTypeCode']);
  });
});
