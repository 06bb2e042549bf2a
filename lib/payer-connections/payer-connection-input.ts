import type { PayerConnectionWritableStatus } from '#lib/entities/payer-connection';

/** What a client writes: the body of a create (POST) or a replace (PUT). */
export interface PayerConnectionInput {
  externalId?: string;
  clientUserId: string;
  payerId: string;
  /** The client_id the payer issued the organization (stored as `payerClientId`). */
  clientId: string;
  status?: PayerConnectionWritableStatus;
  version?: number;
}

export type NewPayerConnection = PayerConnectionInput & { externalId: string };
