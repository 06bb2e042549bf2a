import type {
  Bundle,
  BundleEntry,
  Claim,
  Coverage,
  Identifier,
  Patient,
  Reference,
  Resource,
} from '@medplum/fhirtypes';

/*
 * What the payer reads in a PAS Bundle (request or inquiry): references resolved inside the Bundle, the
 * member id, the providers' NPIs, the claim's identifiers. Reads only; the checks are in pas-constraints.ts.
 */

const NPI_SYSTEM = 'http://hl7.org/fhir/sid/us-npi';

/** An entry found for a reference, with its index (for FHIRPath expressions). */
export interface Resolved<T extends Resource = Resource> {
  index: number;
  entry: BundleEntry<T>;
  resource: T;
}

/**
 * The entry a reference points at, as FHIR resolves references in a Bundle: the same fullUrl, or a
 * relative `Type/id` against an entry's resource type and id (or a fullUrl ending in it).
 */
export function resolve(bundle: Bundle, reference: Reference | undefined): Resolved | undefined {
  const target = reference?.reference;
  if (typeof target !== 'string' || !target) return undefined;
  const entries = bundle.entry ?? [];
  const relative = /^([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})$/.exec(target);
  const index = entries.findIndex(
    (entry) =>
      entry?.fullUrl === target ||
      (relative !== null &&
        ((entry?.resource?.resourceType === relative[1] && entry.resource?.id === relative[2]) ||
          (entry?.fullUrl?.endsWith(`/${target}`) ?? false))),
  );
  const entry = entries[index];
  return entry?.resource ? { index, entry, resource: entry.resource } : undefined;
}

/** The first entry's resource, when it is a Claim. */
export const claimOf = (bundle: Bundle): Claim | undefined => {
  const first = bundle.entry?.[0]?.resource;
  return first?.resourceType === 'Claim' ? first : undefined;
};

/** The focal (else first) insurance's Coverage, resolved in the Bundle. */
export function coverageOf(bundle: Bundle, claim: Claim): Resolved<Coverage> | undefined {
  const insurance = claim.insurance?.find((candidate) => candidate?.focal) ?? claim.insurance?.[0];
  const found = resolve(bundle, insurance?.coverage);
  return found?.resource.resourceType === 'Coverage' ? (found as Resolved<Coverage>) : undefined;
}

const isMemberIdType = (identifier: Identifier) =>
  identifier.type?.coding?.some((coding) => coding?.code === 'MB') ?? false;

const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

/**
 * The member id: the Coverage's subscriber id, else its member-id identifier (type MB, as US Core has it),
 * else the patient's MB identifier (what PAS says an inquiry identifies the patient by).
 */
export function memberIdOf(bundle: Bundle, claim: Claim): string | undefined {
  const coverage = coverageOf(bundle, claim)?.resource;
  const patient = resolve(bundle, claim.patient)?.resource as Patient | undefined;
  return (
    text(coverage?.subscriberId) ??
    text(coverage?.identifier?.find(isMemberIdType)?.value) ??
    (patient?.resourceType === 'Patient' ? text(patient.identifier?.find(isMemberIdType)?.value) : undefined)
  );
}

/** NPIs of a provider reference: an Organization's or Practitioner's, or through a PractitionerRole. */
function npisOfProvider(bundle: Bundle, reference: Reference | undefined): string[] {
  const found = resolve(bundle, reference)?.resource;
  if (!found) return [];
  if (found.resourceType === 'PractitionerRole') {
    return [...npisOfProvider(bundle, found.practitioner), ...npisOfProvider(bundle, found.organization)];
  }
  if (found.resourceType !== 'Organization' && found.resourceType !== 'Practitioner') return [];
  return (found.identifier ?? [])
    .filter((identifier) => identifier?.system === NPI_SYSTEM && text(identifier.value))
    .map((identifier) => identifier.value!.trim());
}

/** The NPIs of the requesting provider and of the care team (the rendering providers). */
export const providerNpisOf = (bundle: Bundle, claim: Claim): string[] => [
  ...new Set([
    ...npisOfProvider(bundle, claim.provider),
    ...(claim.careTeam ?? []).flatMap((member) => npisOfProvider(bundle, member?.provider)),
  ]),
];

/** `system|value` of an identifier (value alone without a system): how identifiers are compared. */
export const identifierKey = (identifier: Identifier | undefined): string | undefined => {
  const value = text(identifier?.value);
  if (!value) return undefined;
  return identifier?.system ? `${identifier.system}|${value}` : value;
};

const LOINC = 'http://loinc.org';
const INFO_CANCELLED = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/modifierextension-infoCancelled';

/** The LOINC codes of the documents the Claim carries (its supportingInfo's DocumentReferences, cancelled ones aside). */
export const documentCodesOf = (bundle: Bundle, claim: Claim): string[] =>
  (claim.supportingInfo ?? [])
    .filter((entry) => !entry?.modifierExtension?.some((flag) => flag?.url === INFO_CANCELLED && flag.valueBoolean))
    .flatMap((entry) => {
      const found = resolve(bundle, entry?.valueReference)?.resource;
      if (found?.resourceType !== 'DocumentReference') return [];
      return (found.type?.coding ?? []).filter((coding) => coding?.system === LOINC && text(coding.code));
    })
    .map((coding) => coding.code!.trim());

/** The Claim a Claim update replaces (Claim.related.claim), by identifier or by its entry in the Bundle. */
export const relatedClaimIdentifiersOf = (bundle: Bundle, claim: Claim): Identifier[] =>
  (claim.related ?? []).flatMap((related) => {
    const named = related?.claim?.identifier ? [related.claim.identifier] : [];
    const included = resolve(bundle, related?.claim)?.resource;
    return [...named, ...(included?.resourceType === 'Claim' ? (included.identifier ?? []) : [])];
  });
