import type { Bundle } from '@medplum/fhirtypes';
import { bundleEntries, CLAIM_KEY } from './bundle-entries.ts';
import { claimOf } from './claim.ts';
import { OUR_SYSTEMS } from './codes.ts';
import { mapDiagnoses } from './diagnoses.ts';
import { mapItems } from './items.ts';
import type { MappingContext, MappingProblem, PasSubmission } from './mapping-context.ts';
import { mapCoverage } from './patient-coverage.ts';
import { mapCareTeam, mapRequester } from './providers.ts';
import { fieldsOf } from './request-fields.ts';
import { mapSupportingInfo } from './supporting-info.ts';

/**
 * A PAS Request Bundle (PASRequestBundle, for Claim/$submit) from a stored request: the Claim first, then
 * every resource it references, once each (docs/payer-api.md, "From a request to a PAS Bundle"). Never
 * throws: every field PAS cannot do without that is missing or cannot be mapped is a problem with its
 * request path, and the Bundle is still built as far as it goes (a dry run shows both; a submission with
 * problems is refused before anything is sent). The same submission always gives the same Bundle.
 */
export const buildPasRequestBundle = (input: PasSubmission): { bundle: Bundle; problems: MappingProblem[] } => {
  const entries = bundleEntries(input.bundleIdentifier, input.entryNamespace);
  const mapping: MappingContext = {
    document: fieldsOf(input.request.document),
    problems: [],
    entries,
    payer: input.payer,
  };
  const { patient, insurer, coverage } = mapCoverage(mapping);
  const provider = mapRequester(mapping);
  const careTeam = mapCareTeam(mapping);
  const diagnosis = mapDiagnoses(mapping);
  const item = mapItems(mapping);
  const supportingInfo = mapSupportingInfo(mapping, input.attachments, patient);
  const claim = claimOf(mapping, {
    bundleIdentifier: input.bundleIdentifier,
    submittedAt: input.submittedAt,
    patient,
    insurer,
    coverage,
    provider,
    careTeam,
    diagnosis,
    item,
    supportingInfo,
  });
  const bundle: Bundle = {
    resourceType: 'Bundle',
    identifier: { system: OUR_SYSTEMS.submission, value: input.bundleIdentifier },
    type: 'collection',
    timestamp: input.submittedAt,
    entry: [{ fullUrl: entries.fullUrlOf(CLAIM_KEY), resource: claim }, ...entries.list()],
  };
  return { bundle, problems: mapping.problems };
};
