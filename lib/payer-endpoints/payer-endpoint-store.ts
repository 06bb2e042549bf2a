import type { StoredPayerEndpoint } from '#lib/entities/payer-endpoint';

/** Port: the operators' directory of payer APIs (docs/payer-connections.md, "Payer endpoints"). */
export interface PayerEndpointStore {
  /** The endpoint of a payer (a request's `patient.PayerId`), or undefined when the payer has no API here. */
  get(payerId: string): Promise<StoredPayerEndpoint | undefined>;
  /** Throws VersionConflict (lib/concurrency.ts) when the payer has an endpoint already. */
  create(endpoint: StoredPayerEndpoint): Promise<void>;
  /** Writes `endpoint` if the stored version is still `expectedVersion`; else throws VersionConflict. */
  update(endpoint: StoredPayerEndpoint, expectedVersion: number): Promise<void>;
  /** Deletes the payer's endpoint; false when it has none. */
  delete(payerId: string): Promise<boolean>;
  /** Every endpoint, in payer-id order. */
  list(): Promise<StoredPayerEndpoint[]>;
}
