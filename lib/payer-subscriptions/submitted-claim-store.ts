import type { SubmittedClaim } from '#lib/entities/payer-subscription';

/**
 * Port: the claims we submitted through PAS, by the identifier we gave them (`Claim.identifier`, our claim
 * system): what a payer's notification names, resolved to the request it stands for.
 */
export interface SubmittedClaimStore {
  /** Records a claim as sent under this identifier; an identifier is ours and random, so a put again is the same. */
  record(claim: SubmittedClaim): Promise<void>;
  /** The claim within the client (another client's identifier is simply not there). */
  get(clientId: string, claimIdentifier: string): Promise<SubmittedClaim | undefined>;
}
