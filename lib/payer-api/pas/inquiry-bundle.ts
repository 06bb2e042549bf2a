import type { Bundle, Claim } from '@medplum/fhirtypes';
import { bundleEntries, CLAIM_KEY } from './bundle-entries.ts';
import { pasClaimIdentifier } from './claim.ts';
import { claimTypeOf, EXTENSIONS, OUR_SYSTEMS, priorityOf } from './codes.ts';
import type { MappingContext, PasInquiry } from './mapping-context.ts';
import { mapCoverage } from './patient-coverage.ts';
import { mapCareTeam, mapRequester } from './providers.ts';
import { fieldsOf, periodOf, serviceDatesOf, textOf } from './request-fields.ts';

/*
 * A PAS Inquiry Request Bundle (PASInquiryRequestBundle, for Claim/$inquire): a query by example. The
 * payer matches on the member id (the Patient's MB identifier, the Coverage) plus the provider's NPI
 * (spec-53: Claim.provider and the care team), and a specific request on its identifiers:
 * - Claim.identifier carries the submitted Claim's identifier when the request went through PAS, as the
 *   IG's inquiry example echoes its request's; otherwise this inquiry's own (IG 2.2.1 reads Claim.identifier
 *   as the inquiry's TRN: docs/payer-api.md, "Inquiry").
 * - the payer's authorization number, when known, in the authorizationNumber extension (X12 REF*BB).
 * No diagnoses (each would be an X12 inquiry of its own) and no items (any service of the request matches).
 */

const billablePeriodOf = (document: Record<string, unknown>): Pick<Claim, 'billablePeriod'> => {
  const dates = serviceDatesOf(document);
  return dates !== null ? { billablePeriod: periodOf(dates) } : {};
};

export const buildPasInquiryBundle = (input: PasInquiry): Bundle => {
  const entries = bundleEntries(input.bundleIdentifier);
  // An inquiry sends what the request has: what it lacks was refused when it was submitted, not here.
  const mapping: MappingContext = {
    document: fieldsOf(input.request.document),
    problems: [],
    entries,
    payer: input.payer,
  };
  const { patient, insurer, coverage } = mapCoverage(mapping);
  const provider = mapRequester(mapping);
  const careTeam = mapCareTeam(mapping);
  const document = mapping.document;
  const claim: Claim = {
    resourceType: 'Claim',
    ...(input.authorizationNumber !== null
      ? { extension: [{ url: EXTENSIONS.authorizationNumber, valueString: input.authorizationNumber }] }
      : {}),
    identifier: [
      input.claimIdentifier !== null
        ? pasClaimIdentifier(input.claimIdentifier)
        : { system: OUR_SYSTEMS.inquiry, value: input.bundleIdentifier },
    ],
    status: 'active',
    type: claimTypeOf(textOf(document.requestTypeCode), textOf(document.serviceTypeCode)),
    use: 'preauthorization',
    patient,
    ...billablePeriodOf(document),
    created: input.inquiredAt,
    insurer,
    provider,
    priority: priorityOf(null),
    ...(careTeam.length > 0 ? { careTeam } : {}),
    insurance: [{ sequence: 1, focal: true, coverage }],
  };
  return {
    resourceType: 'Bundle',
    identifier: { system: OUR_SYSTEMS.inquiry, value: input.bundleIdentifier },
    type: 'collection',
    timestamp: input.inquiredAt,
    entry: [{ fullUrl: entries.fullUrlOf(CLAIM_KEY), resource: claim }, ...entries.list()],
  };
};
