import type { Bundle, Claim, Extension, Identifier } from '@medplum/fhirtypes';
import { claimOf, memberIdOf, providerNpisOf } from './bundle-reading.ts';
import type { StoredClaim } from './claims.ts';

/**
 * Which claims a $inquire finds (query by example, PAS specification "Prior Authorization Inquiries"):
 * - always the member (its member id) and a provider of the claim (the requesting or a rendering
 *   provider's NPI): PAS spec-53 requires both before anything is shown;
 * - then, if the inquiry names them, the authorization or pend numbers (REF-BB, REF-NT: the
 *   authorizationNumber and administrationReferenceNumber extensions, on the Claim or an item);
 * - then the Claim's identifier, compared with the submitted Claim's. PAS calls the inquiry's identifier
 *   its own trace number; our client sends the submitted claim's there (docs/pas-payer.md), and a payer
 *   that answered another claim of the member to it would mislead the client. So an identifier that
 *   matches none of the member's claims finds nothing.
 * Newest first.
 */
const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';
const REFERENCE_NUMBERS = new Set([
  `${PAS}extension-authorizationNumber`,
  `${PAS}extension-administrationReferenceNumber`,
]);

const numbersIn = (extensions: readonly Extension[] | undefined): string[] =>
  (extensions ?? [])
    .filter((extension) => REFERENCE_NUMBERS.has(extension?.url) && typeof extension.valueString === 'string')
    .map((extension) => extension.valueString!.trim());

/** The authorization and pend numbers the inquiry names, on the Claim or its items. */
const referenceNumbersOf = (claim: Claim) =>
  new Set([...numbersIn(claim.extension), ...(claim.item ?? []).flatMap((item) => numbersIn(item?.extension))]);

/** Same value; same system too when both have one. */
const sameIdentifier = (stored: StoredClaim['claimIdentifiers'][number], asked: Identifier) =>
  stored.value === asked.value?.trim() && (!stored.system || !asked.system || stored.system === asked.system);

export function matchingClaims(claims: readonly StoredClaim[], inquiry: Bundle): StoredClaim[] {
  const claim = claimOf(inquiry)!;
  const memberId = memberIdOf(inquiry, claim);
  const npis = new Set(providerNpisOf(inquiry, claim));
  let found = claims.filter((stored) => stored.memberId === memberId && stored.npis.some((npi) => npis.has(npi)));
  const numbers = referenceNumbersOf(claim);
  if (numbers.size > 0) {
    found = found.filter(
      (stored) =>
        (stored.preAuthRef && numbers.has(stored.preAuthRef)) || (stored.pendRef && numbers.has(stored.pendRef)),
    );
  }
  const identifiers = (claim.identifier ?? []).filter((identifier) => identifier?.value?.trim());
  if (identifiers.length > 0) {
    found = found.filter((stored) =>
      stored.claimIdentifiers.some((known) => identifiers.some((identifier) => sameIdentifier(known, identifier))),
    );
  }
  return found;
}
