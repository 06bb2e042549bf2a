/*
 * Port: what choosing a channel reads of the payer-API side: the operator's directory of payer endpoints
 * and the organizations' payer connections (lib/payer-endpoints/, lib/payer-connections/ adapt to it).
 */

/** A payer connection as a start reads it. */
export interface PayerConnectionChoice {
  externalId: string;
  organizationId: string;
  payerId: string;
  status: 'active' | 'attention' | 'disabled';
}

export interface PayerDirectory {
  /** The payer's PAS endpoint as the operator registered it (its name, for the Bundle's insurer); undefined: none. */
  apiOf(payerId: string): Promise<{ name: string | null } | undefined>;
  /** The organization's active connection to the payer, if it has one. */
  activeConnection(
    clientId: string,
    organizationId: string,
    payerId: string,
  ): Promise<PayerConnectionChoice | undefined>;
  /** One connection of the client, by its externalId (any organization: the caller checks). */
  connection(clientId: string, externalId: string): Promise<PayerConnectionChoice | undefined>;
}
