import type { PayerSigningKeySet } from '#lib/entities/payer-signing-keys';

/**
 * The port the DynamoDB adapter implements for clients' payer signing key sets (records:
 * lib/entities/payer-signing-keys.ts). A write carries the next version and is conditional on the one
 * before it (version 1: on there being none); VersionConflict otherwise (lib/concurrency.ts).
 */
export interface PayerKeySetStore {
  /** The client's own key set, read from its own partition (consistent): what signs for its connections. */
  ofClient(clientId: string): Promise<PayerSigningKeySet | undefined>;
  /** The key set that has this public id (an index: eventually consistent): what the JWKS route publishes. */
  byKeySetId(keySetId: string): Promise<PayerSigningKeySet | undefined>;
  put(keySet: PayerSigningKeySet): Promise<void>;
}
