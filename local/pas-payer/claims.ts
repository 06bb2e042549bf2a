import { randomUUID } from 'node:crypto';
import type { Bundle, Claim } from '@medplum/fhirtypes';
import { documentCodesOf, identifierKey, memberIdOf, providerNpisOf } from './bundle-reading.ts';
import type { ReceivedDocument } from './cdex-parameters.ts';
import { anyCertified, type ClaimVerdict, decideItems, type ItemDecision } from './decisions.ts';
import type { ReasonCode } from './seed.ts';

/**
 * The claims the payer holds, in memory like the sandbox portal's authorizations. One claim per client
 * and Bundle.identifier: a $submit that carries an identifier seen before gets the claim it made, so a
 * client's retries never make a second claim. A pended claim changes when the operator decides it.
 */
export interface StoredClaim {
  /** The ClaimResponse's id, also the operator's handle on the claim. */
  id: string;
  clientId: string;
  /** identifierKey of the request Bundle's identifier. */
  bundleIdentifier: string;
  /** The request as submitted: the answer carries its Patient, Coverage, providers and Claim. */
  request: Bundle;
  claim: Claim;
  claimFullUrl: string;
  /** The submitted Claim's identifiers (value trimmed): what an inquiry names it by. */
  claimIdentifiers: { system?: string; value: string }[];
  memberId: string;
  npis: string[];
  receivedAt: string;
  verdict: ClaimVerdict;
  items: ItemDecision[];
  /** When the claim was decided (or received, while pended): the ClaimResponse's `created`. */
  decidedAt: string;
  /** The authorization number, once an item is certified (preAuthRef). */
  preAuthRef?: string;
  /** The number a pended claim is tracked by (the items' administrationReferenceNumber). */
  pendRef?: string;
  /** The LOINC codes of the documents the claim carries, as submitted and updated. */
  documentCodes: string[];
  /** Documents received for it by CDex $submit-attachment (cdex.ts): what each is, never its bytes. */
  documents?: ReceivedDocument[];
}

export interface ClaimInput {
  clientId: string;
  request: Bundle;
  claim: Claim;
  verdict: ClaimVerdict;
  reason?: ReasonCode;
}

const identifiersOf = (claim: Claim): StoredClaim['claimIdentifiers'] =>
  (claim.identifier ?? []).flatMap((identifier) =>
    identifier?.value?.trim()
      ? [{ ...(identifier.system ? { system: identifier.system } : {}), value: identifier.value.trim() }]
      : [],
  );

export const claimStore = (now: () => Date) => {
  const claims: StoredClaim[] = [];
  const bySubmission = new Map<string, StoredClaim>();
  let numbers = 0;
  const number = (prefix: string) => `${prefix}-${String(++numbers).padStart(6, '0')}`;
  const submissionKey = (clientId: string, bundleIdentifier: string) => `${clientId}\u0000${bundleIdentifier}`;

  /** The verdict's items and numbers, applied to the claim. */
  const apply = (stored: StoredClaim, verdict: ClaimVerdict, items: ItemDecision[], authorizationNumber?: string) => {
    stored.verdict = verdict;
    stored.items = items;
    stored.decidedAt = now().toISOString();
    if (anyCertified(items)) stored.preAuthRef = authorizationNumber ?? number('SBXPA');
    if (verdict === 'pended') stored.pendRef ??= number('SBXPEND');
  };

  return {
    find: (clientId: string, bundleIdentifier: string) => bySubmission.get(submissionKey(clientId, bundleIdentifier)),
    byId: (id: string) => claims.find((claim) => claim.id === id),
    /** Newest first. */
    all: (): readonly StoredClaim[] => [...claims].reverse(),
    /** How many claims were made from Bundles with this identifier (`system|value`, or the value alone). */
    countWithIdentifier: (bundleIdentifier: string) =>
      claims.filter((claim) => claim.bundleIdentifier === bundleIdentifier).length,

    create(input: ClaimInput): StoredClaim {
      const { request, claim } = input;
      const bundleIdentifier = identifierKey(request.identifier)!;
      const receivedAt = now().toISOString();
      const stored: StoredClaim = {
        id: randomUUID(),
        clientId: input.clientId,
        bundleIdentifier,
        request,
        claim,
        claimFullUrl: request.entry![0]!.fullUrl!,
        claimIdentifiers: identifiersOf(claim),
        memberId: memberIdOf(request, claim)!,
        npis: providerNpisOf(request, claim),
        receivedAt,
        verdict: 'pended',
        items: [],
        decidedAt: receivedAt,
        documentCodes: documentCodesOf(request, claim),
      };
      apply(stored, input.verdict, decideItems(claim.item ?? [], input.verdict, input.reason));
      claims.push(stored);
      bySubmission.set(submissionKey(input.clientId, bundleIdentifier), stored);
      return stored;
    },

    /**
     * A Claim update (or cancel) of the claim: still one claim, now with the update's Claim, known by its
     * identifiers too, its documents added, decided again by `verdict` (its authorization number kept).
     */
    update(stored: StoredClaim, input: Omit<ClaimInput, 'reason'>) {
      const { request, claim } = input;
      stored.request = request;
      stored.claim = claim;
      stored.claimFullUrl = request.entry![0]!.fullUrl!;
      stored.claimIdentifiers.push(...identifiersOf(claim));
      stored.documentCodes = [...new Set([...stored.documentCodes, ...documentCodesOf(request, claim)])];
      bySubmission.set(submissionKey(input.clientId, identifierKey(request.identifier)!), stored);
      apply(stored, input.verdict, decideItems(claim.item ?? [], input.verdict), stored.preAuthRef);
    },

    /** A claim of the client that a Claim has (or had) as identifier, `system|value` or value alone. */
    byClaimIdentifier: (clientId: string, key: string) =>
      claims.find(
        (claim) =>
          claim.clientId === clientId &&
          claim.claimIdentifiers.some((known) => identifierKey(known) === key || known.value === key),
      ),

    /** The operator's decision of a pended claim (the caller checked it is pended). */
    decide(stored: StoredClaim, verdict: ClaimVerdict, reason?: ReasonCode, authorizationNumber?: string) {
      apply(stored, verdict, decideItems(stored.claim.item ?? [], verdict, reason), authorizationNumber);
    },
  };
};

export type ClaimStore = ReturnType<typeof claimStore>;
