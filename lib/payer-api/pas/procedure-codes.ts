import { SYSTEMS } from './codes.ts';

/*
 * A procedure's requested service as PAS binds Claim.item.productOrService (X12278RequestedServiceType):
 * the X12 product/service id qualifier (element 235) names the code system, and the code must look like
 * a code of it. A qualifier outside this table, or a code that does not fit its system, is unmappable.
 */

interface QualifiedSystem {
  /** The FHIR system of a code of this qualifier, or null when the code does not look like one of it. */
  systemOf: (code: string) => string | null;
  /** What the code must look like, for the problem's message. */
  expects: string;
}

/** CPT: five digits, or four and F (category II), T (category III) or U (proprietary laboratory analyses). */
const CPT = /^[0-9]{4}[0-9FTU]$/;
/** HCPCS level II: a letter and four digits. */
const HCPCS = /^[A-Z][0-9]{4}$/;
/** ICD-10-PCS: seven characters of 0–9 and A–Z without I and O. */
const ICD10PCS = /^[0-9A-HJ-NP-Z]{7}$/;
/** NDC: the 11-digit 5-4-2 form X12 sends (N4), or a 10-digit labeler-product-package form with hyphens. */
const NDC =
  /^([0-9]{11}|[0-9]{5}-[0-9]{4}-[0-9]{2}|[0-9]{4}-[0-9]{4}-[0-9]{2}|[0-9]{5}-[0-9]{3}-[0-9]{2}|[0-9]{5}-[0-9]{4}-[0-9])$/;

const icd10pcs: QualifiedSystem = {
  systemOf: (code) => (ICD10PCS.test(code) ? SYSTEMS.icd10pcs : null),
  expects: 'an ICD-10-PCS code (7 characters)',
};

const QUALIFIERS: Readonly<Record<string, QualifiedSystem>> = {
  // HCPCS level I is CPT: the AMA's system for CPT's shape, CMS's for level II.
  HC: {
    systemOf: (code) => {
      if (CPT.test(code)) return SYSTEMS.cpt;
      return HCPCS.test(code) ? SYSTEMS.hcpcs : null;
    },
    expects: 'a CPT code (5 characters, digits first) or an HCPCS level II code (a letter and 4 digits)',
  },
  N4: { systemOf: (code) => (NDC.test(code) ? SYSTEMS.ndc : null), expects: 'an NDC (11 digits, or 10 with hyphens)' },
  // The X12 HI qualifiers of ICD-10-PCS principal and other procedures.
  BBR: icd10pcs,
  BBQ: icd10pcs,
};

const PROCEDURE_QUALIFIERS: readonly string[] = Object.keys(QUALIFIERS);

export type ProcedureCode = { system: string; code: string } | { unmappable: 'qualifier' | 'code'; message: string };

/** The productOrService coding of a procedure's qualifier and code (both present, trimmed). */
export const procedureCodeOf = (qualifier: string, code: string): ProcedureCode => {
  const qualified = QUALIFIERS[qualifier.toUpperCase()];
  if (!qualified) {
    return {
      unmappable: 'qualifier',
      message: `the procedure's qualifier names no code system PAS accepts (one of ${PROCEDURE_QUALIFIERS.join(', ')})`,
    };
  }
  const normalized = code.toUpperCase();
  const system = qualified.systemOf(normalized);
  if (system === null) return { unmappable: 'code', message: `the procedure's code is not ${qualified.expects}` };
  return { system, code: normalized };
};
