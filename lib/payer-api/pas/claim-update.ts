import type { Bundle, Claim, ClaimRelated, Extension } from '@medplum/fhirtypes';
import { CLAIM_KEY, nameBasedUuid } from './bundle-entries.ts';
import { pasClaimIdentifier } from './claim.ts';
import { updatedItems, updatedSupportingInfo } from './claim-update-entries.ts';
import { codedExtension, conceptOf, EXTENSIONS, X12 } from './codes.ts';
import type { MappingProblem, PasSubmission } from './mapping-context.ts';
import { buildPasRequestBundle } from './request-bundle.ts';

/*
 * A PAS Claim update (PASClaimUpdate, PAS "Updating Authorization Requests"): the request's current
 * details as a new Claim with its own identifier, `related.claim` naming the Claim it replaces, which
 * the Bundle carries too (spec-65; a replaced Claim that is itself an update goes without the Claim it
 * names, spec-66), items and supportingInfo flagged against it (claim-update-entries.ts). A cancel is
 * an update of the replaced Claim as it was, with certification type 3 on the Claim: nothing of the
 * request is read but its resources, so a request changed since cannot hold a cancel back.
 */

const CLAIM_UPDATE_PROFILE = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/profile-claim-update';
const RELATIONSHIP = 'http://terminology.hl7.org/CodeSystem/ex-relatedclaimrelationship';

export interface PasClaimUpdate extends PasSubmission {
  action: 'update' | 'cancel';
  /** The Claim this one replaces, as it was sent, and its identifier. */
  replaced: { claim: Claim; identifier: string };
}

/** The fullUrl a Claim had in its own Bundle, and has in the Bundle of the update that carries it. */
const claimFullUrlOf = (identifier: string) => `urn:uuid:${nameBasedUuid(`${identifier}\u0000${CLAIM_KEY}`)}`;

const relatedTo = (identifier: string): ClaimRelated[] => [
  {
    claim: { reference: claimFullUrlOf(identifier), type: 'Claim', identifier: pasClaimIdentifier(identifier) },
    relationship: conceptOf(RELATIONSHIP, 'prior'),
  },
];

/** The replaced Claim as the update carries it: an update's own related Claim named by identifier only. */
const carriedClaim = (claim: Claim): Claim => ({
  ...claim,
  ...(claim.related
    ? {
        related: claim.related.map(({ claim: named, ...rest }) => ({
          ...rest,
          claim: { identifier: named?.identifier },
        })),
      }
    : {}),
});

const withoutCertificationType = (extensions: Extension[] | undefined) =>
  (extensions ?? []).filter((extension) => extension.url !== EXTENSIONS.certificationType);

const updateOf = (current: Claim, replaced: Claim, related: ClaimRelated[]): Claim => {
  const supportingInfo = updatedSupportingInfo(replaced.supportingInfo ?? [], current.supportingInfo ?? []);
  const { item: _item, supportingInfo: _info, ...rest } = current;
  return {
    ...rest,
    meta: { profile: [CLAIM_UPDATE_PROFILE] },
    related,
    ...(supportingInfo.length > 0 ? { supportingInfo } : {}),
    item: updatedItems(replaced.item ?? [], current.item ?? []),
  };
};

const cancelOf = (current: Claim, replaced: Claim, related: ClaimRelated[]): Claim => {
  const unchanged = updatedItems(replaced.item ?? [], replaced.item ?? []);
  const supportingInfo = updatedSupportingInfo(replaced.supportingInfo ?? [], replaced.supportingInfo ?? []);
  const { item: _item, supportingInfo: _info, related: _related, ...rest } = replaced;
  return {
    ...rest,
    meta: { profile: [CLAIM_UPDATE_PROFILE] },
    extension: [
      ...withoutCertificationType(replaced.extension),
      codedExtension(EXTENSIONS.certificationType, X12.certificationType, '3'),
    ],
    identifier: current.identifier,
    created: current.created,
    related,
    ...(supportingInfo.length > 0 ? { supportingInfo } : {}),
    item: unchanged,
  };
};

/** The update's (or cancel's) Bundle; a cancel has no problems, since it sends what was sent. */
export const buildPasUpdateBundle = (input: PasClaimUpdate): { bundle: Bundle; problems: MappingProblem[] } => {
  const built = buildPasRequestBundle(input);
  const [first, ...rest] = built.bundle.entry ?? [];
  const current = first!.resource as Claim;
  const related = relatedTo(input.replaced.identifier);
  const claim =
    input.action === 'cancel'
      ? cancelOf(current, input.replaced.claim, related)
      : updateOf(current, input.replaced.claim, related);
  const bundle: Bundle = {
    ...built.bundle,
    entry: [
      { ...first, resource: claim },
      ...rest,
      { fullUrl: claimFullUrlOf(input.replaced.identifier), resource: carriedClaim(input.replaced.claim) },
    ],
  };
  return { bundle, problems: input.action === 'cancel' ? [] : built.problems };
};
