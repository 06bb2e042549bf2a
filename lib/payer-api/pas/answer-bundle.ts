import type { Bundle, BundleEntry, Claim, ClaimResponse, Reference, Resource } from '@medplum/fhirtypes';
import { isRecord, recordsOf, resourceTypeOf, UnreadableAnswer } from './answer-json.ts';
import { identifierValueOf } from './answer-values.ts';

/*
 * The resources around a ClaimResponse in a PAS Response Bundle: the Claim it answers (echoed by some
 * payers, required when the response needs it) and what the Claim's items reference.
 */

/** The most entries one Bundle of an answer may hold (PAS answers hold the ClaimResponse and what it references). */
const MAX_ENTRIES = 1000;

/** The resources of a Bundle with their fullUrl; an entry without a resource object is passed over. */
export const entriesOf = (bundle: Bundle): { fullUrl: string | undefined; resource: Resource }[] => {
  const entries = bundle.entry;
  if (Array.isArray(entries) && entries.length > MAX_ENTRIES) {
    throw new UnreadableAnswer(`a Bundle of the answer has more than ${MAX_ENTRIES} entries`);
  }
  return recordsOf<BundleEntry>(entries, MAX_ENTRIES)
    .filter((entry) => resourceTypeOf(entry.resource) !== undefined)
    .map((entry) => ({
      fullUrl: typeof entry.fullUrl === 'string' ? entry.fullUrl : undefined,
      resource: entry.resource as Resource,
    }));
};

/** What the ClaimResponse can reach in its Bundle: a reference resolved, and the Claim it answers. */
export interface AnswerContext {
  resolve(reference: Reference | undefined): Resource | undefined;
  claim: Claim | undefined;
}

/** The context of a ClaimResponse that came alone: nothing to resolve. */
export const NO_CONTEXT: AnswerContext = { resolve: () => undefined, claim: undefined };

/** `Type/id` at the end of a reference (relative, or absolute with the server's base), without a version. */
const TYPE_AND_ID = /(?:^|\/)([A-Z][A-Za-z]{1,63})\/([A-Za-z0-9.-]{1,64})(?:\/_history\/[A-Za-z0-9.-]{1,64})?$/;

/** Resolution inside the Bundle: by fullUrl first, else by `Type/id` against the resources' own type and id. */
const resolverOf = (entries: { fullUrl: string | undefined; resource: Resource }[]) => {
  const byUrl = new Map<string, Resource>();
  const byTypeAndId = new Map<string, Resource>();
  for (const { fullUrl, resource } of entries) {
    if (fullUrl !== undefined && !byUrl.has(fullUrl)) byUrl.set(fullUrl, resource);
    if (typeof resource.id === 'string' && !byTypeAndId.has(`${resource.resourceType}/${resource.id}`)) {
      byTypeAndId.set(`${resource.resourceType}/${resource.id}`, resource);
    }
  }
  return (reference: Reference | undefined): Resource | undefined => {
    const target = isRecord(reference) ? reference.reference : undefined;
    if (typeof target !== 'string' || target.length > 500) return undefined;
    const parts = TYPE_AND_ID.exec(target);
    return byUrl.get(target) ?? (parts ? byTypeAndId.get(`${parts[1]}/${parts[2]}`) : undefined);
  };
};

/**
 * The context of a ClaimResponse in its Bundle. The Claim is the one ClaimResponse.request names;
 * when it names none the Bundle holds, the Bundle's only Claim (a Bundle of two Claims, an update
 * and its original, gives none).
 */
export const contextOf = (
  response: ClaimResponse,
  entries: { fullUrl: string | undefined; resource: Resource }[],
): AnswerContext => {
  const resolve = resolverOf(entries);
  const named = resolve(response.request);
  const claims = entries.map((entry) => entry.resource).filter((resource) => resource.resourceType === 'Claim');
  const claim = named?.resourceType === 'Claim' ? named : claims.length === 1 ? claims[0] : undefined;
  return { resolve, claim: claim as Claim | undefined };
};

/**
 * The identifier of the Claim the ClaimResponse answers, as the payer echoes it: the identifier in
 * ClaimResponse.request, else the Claim's in the Bundle, else the ClaimResponse's own (PAS gives it
 * the trace number of the request). Null when none is in form.
 */
export const claimIdentifierOf = (response: ClaimResponse, context: AnswerContext): string | null => {
  const request = isRecord(response.request) ? response.request : undefined;
  const candidates = [
    isRecord(request?.identifier) ? request.identifier.value : undefined,
    ...recordsOf<{ value?: unknown }>(context.claim?.identifier, 1).map((identifier) => identifier.value),
    ...recordsOf<{ value?: unknown }>(response.identifier, 1).map((identifier) => identifier.value),
  ];
  for (const candidate of candidates) {
    const value = identifierValueOf(candidate);
    if (value !== null) return value;
  }
  return null;
};
