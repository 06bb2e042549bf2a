import type { ClaimItem, Extension, Quantity } from '@medplum/fhirtypes';
import { codedExtension, conceptOf, EXTENSIONS, SYSTEMS, X12 } from './codes.ts';
import type { MappingContext } from './mapping-context.ts';
import { procedureCodeOf } from './procedure-codes.ts';
import { addProblem, dateOf, type Fields, isFields, requiredText, serviceDatesOf, textOf } from './request-fields.ts';

/*
 * Claim.item: one per procedure of the request (PAS requests services item by item: PASClaim item 1..*),
 * each with its requested service (productOrService), quantity and dates, and the request's X12 UM
 * values PAS carries per item: request category (serviceItemRequestType), certification type, service
 * type (category) and place of service (locationCodeableConcept).
 */

/** What every item carries the same of: the request's service line. */
type ServiceLine = Pick<
  ClaimItem,
  'extension' | 'category' | 'locationCodeableConcept' | 'servicedDate' | 'servicedPeriod'
>;

/** UM02: a new Claim is an initial request unless the request says otherwise; cancelling goes through an update. */
const certificationTypeOf = (mapping: MappingContext): string => {
  const code = textOf(mapping.document.certificationTypeCode) ?? 'I';
  if (code === '3') {
    addProblem(mapping, '/certificationTypeCode', 'unmappable', 'a cancellation is an update of a submitted request');
  }
  if (code === '1' && textOf(mapping.document.serviceLevelCode) === null) {
    // PASClaim's ImmediateLevelOfCare invariant.
    addProblem(mapping, '/serviceLevelCode', 'missing', 'an immediate appeal needs its level of service');
  }
  return code;
};

const servicedOf = (mapping: MappingContext): Pick<ClaimItem, 'servicedDate' | 'servicedPeriod'> => {
  const from = dateOf(mapping.document.fromDate);
  const to = dateOf(mapping.document.toDate);
  if (from !== null && to !== null && to < from) {
    addProblem(mapping, '/toDate', 'unmappable', 'the last date of service is before the first');
  }
  const dates = serviceDatesOf(mapping.document);
  if (dates === null) return {};
  return 'day' in dates ? { servicedDate: dates.day } : { servicedPeriod: dates.period };
};

const serviceLineOf = (mapping: MappingContext): ServiceLine => {
  const document = mapping.document;
  const requestType = requiredText(mapping, document, '/requestTypeCode', 'the request category (X12 UM01) is needed');
  const extension: Extension[] = [
    ...(requestType !== null ? [codedExtension(EXTENSIONS.requestType, X12.requestCategory, requestType)] : []),
    codedExtension(EXTENSIONS.certificationType, X12.certificationType, certificationTypeOf(mapping)),
  ];
  const serviceType = requiredText(mapping, document, '/serviceTypeCode', 'the service type is needed');
  const place = requiredText(mapping, document, '/placeOfServiceCode', 'the place of service is needed');
  return {
    extension,
    ...(serviceType !== null ? { category: conceptOf(X12.serviceType, serviceType) } : {}),
    ...(place !== null ? { locationCodeableConcept: conceptOf(SYSTEMS.placeOfService, place) } : {}),
    ...servicedOf(mapping),
  };
};

/** X12 HSD01 quantity qualifiers PAS binds (prof-2: a quantity has a code); our schema's UN reads as FL, units. */
const QUANTITY_UNITS: Readonly<Record<string, string>> = {
  DY: 'Days',
  FL: 'Units',
  HS: 'Hours',
  MN: 'Month',
  VS: 'Visits',
};

const quantityValueOf = (mapping: MappingContext, value: unknown, path: string): number | null => {
  const text = textOf(value);
  if (text === null) return null;
  const number = Number(text);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text) || number <= 0 || number > 99999) {
    addProblem(mapping, path, 'unmappable', 'the quantity is not a number above 0 and up to 99999');
    return null;
  }
  return number;
};

const unitsOf = (code: string): Omit<Quantity, 'value'> => ({
  unit: QUANTITY_UNITS[code],
  system: X12.quantityQualifier,
  code,
});

/**
 * The procedure's quantity, in units (X12 SV1 counts units). A request of one procedure that gives no
 * quantity of its own gets the request's (X12 HSD at the service level), in its HSD01 unit; with several
 * procedures the request's quantity would be ambiguous, and stays out. It is anchored by its id, since it
 * does not come from the procedure.
 */
const quantityOf = (mapping: MappingContext, procedure: Fields, path: string, only: boolean): Quantity | undefined => {
  const own = quantityValueOf(mapping, procedure.quantity, `${path}/quantity`);
  if (own !== null) return { value: own, ...unitsOf('FL') };
  if (!only || textOf(procedure.quantity) !== null) return undefined;
  const requested = quantityValueOf(mapping, mapping.document.quantity, '/quantity');
  if (requested === null) return undefined;
  const type = textOf(mapping.document.quantityTypeCode)?.toUpperCase() ?? 'FL';
  const code = type === 'UN' ? 'FL' : type;
  if (!(code in QUANTITY_UNITS)) {
    addProblem(mapping, '/quantityTypeCode', 'unmappable', 'the quantity type is not DY, FL (UN), HS, MN or VS');
    return undefined;
  }
  return { id: '/quantity', value: requested, ...unitsOf(code) };
};

const productOrServiceOf = (
  mapping: MappingContext,
  procedure: Fields,
  path: string,
): ClaimItem['productOrService'] => {
  const qualifier = requiredText(mapping, procedure, `${path}/qualifierCode`, "the procedure's qualifier is needed");
  const code = requiredText(mapping, procedure, `${path}/code`, "the procedure's code is needed");
  const mapped = qualifier !== null && code !== null ? procedureCodeOf(qualifier, code) : null;
  if (mapped !== null && 'unmappable' in mapped) {
    addProblem(
      mapping,
      `${path}/${mapped.unmappable === 'qualifier' ? 'qualifierCode' : 'code'}`,
      'unmappable',
      mapped.message,
    );
  }
  // What cannot be coded holds the item's place as "unknown": the Bundle stays readable, the problem says why.
  return mapped !== null && 'system' in mapped
    ? conceptOf(mapped.system, mapped.code)
    : conceptOf(SYSTEMS.dataAbsentReason, 'unknown');
};

export const mapItems = (mapping: MappingContext): ClaimItem[] => {
  const procedures = mapping.document.procedures;
  if (procedures !== undefined && !Array.isArray(procedures)) {
    addProblem(mapping, '/procedures', 'unmappable', 'the procedures are not a list');
    return [];
  }
  const serviceLine = serviceLineOf(mapping);
  if (procedures === undefined || procedures.length === 0) {
    addProblem(
      mapping,
      '/procedures',
      'missing',
      'at least one procedure is needed: PAS requests services item by item',
    );
    return [];
  }
  return procedures.flatMap((procedure, index): ClaimItem[] => {
    const path = `/procedures/${index}`;
    if (!isFields(procedure)) {
      addProblem(mapping, path, 'unmappable', 'a procedure is not an object');
      return [];
    }
    const productOrService = productOrServiceOf(mapping, procedure, path);
    const quantity = quantityOf(mapping, procedure, path, procedures.length === 1);
    return [
      {
        id: path,
        sequence: index + 1,
        ...structuredClone(serviceLine),
        productOrService,
        ...(quantity !== undefined ? { quantity } : {}),
      },
    ];
  });
};
