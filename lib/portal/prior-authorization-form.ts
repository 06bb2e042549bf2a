import type { StoredRequest } from '#lib/entities/request';

/**
 * The prior-authorization form a driver types into a payer portal, derived from a stored request.
 * Every value is a string, as a web form holds it; a value the request does not have is ''.
 * The request document was validated when it was stored, except procedures (stored as sent since
 * 2025-04-07), so those are read defensively.
 */
interface FormProvider {
  npi: string;
  firstName: string;
  lastName: string;
  organizationName: string;
  roleCode: string;
}

interface FormDiagnosis {
  qualifierCode: string;
  code: string;
}

interface FormProcedure {
  qualifierCode: string;
  code: string;
  quantity: string;
}

export interface PriorAuthorizationForm {
  /** The request's externalId: the provider's reference, by which the portal later finds the authorization. */
  reference: string;
  patient: { memberId: string; firstName: string; lastName: string; birthDate: string; payerId: string };
  requestingProvider: FormProvider;
  renderingProviders: FormProvider[];
  serviceTypeCode: string;
  placeOfServiceCode: string;
  admissionTypeCode: string;
  fromDate: string;
  toDate: string;
  diagnoses: FormDiagnosis[];
  procedures: FormProcedure[];
}

type Document = Record<string, unknown>;

const isDocument = (value: unknown): value is Document =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Strings as they are, finite numbers as digits; anything else (absent, objects, booleans) is blank. */
const text = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
};

const documentsIn = (value: unknown): Document[] => (Array.isArray(value) ? value.filter(isDocument) : []);

const providerOf = (value: unknown): FormProvider => {
  const provider = isDocument(value) ? value : {};
  return {
    npi: text(provider.npi),
    firstName: text(provider.firstName),
    lastName: text(provider.lastName),
    organizationName: text(provider.organizationName),
    roleCode: text(provider.roleCode),
  };
};

const hasAnyValue = (entry: object) => Object.values(entry).some((value) => value !== '');

export const priorAuthorizationFormOf = (
  request: Pick<StoredRequest, 'externalId' | 'document'>,
): PriorAuthorizationForm => {
  const document = request.document;
  const patient = isDocument(document.patient) ? document.patient : {};
  return {
    reference: request.externalId,
    patient: {
      memberId: text(patient.memberId),
      firstName: text(patient.firstName),
      lastName: text(patient.lastName),
      birthDate: text(patient.birthDate),
      payerId: text(patient.PayerId),
    },
    requestingProvider: providerOf(document.requestingProvider),
    renderingProviders: documentsIn(document.renderingProviders).map(providerOf),
    serviceTypeCode: text(document.serviceTypeCode),
    placeOfServiceCode: text(document.placeOfServiceCode),
    admissionTypeCode: text(document.admissionTypeCode),
    fromDate: text(document.fromDate),
    toDate: text(document.toDate),
    diagnoses: documentsIn(document.diagnoses).map((diagnosis) => ({
      qualifierCode: text(diagnosis.qualifierCode),
      code: text(diagnosis.code),
    })),
    procedures: documentsIn(document.procedures)
      .map((procedure) => ({
        qualifierCode: text(procedure.qualifierCode),
        code: text(procedure.code),
        quantity: text(procedure.quantity),
      }))
      .filter(hasAnyValue),
  };
};
