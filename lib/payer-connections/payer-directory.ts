import type { StoredPayerConnection } from '#lib/entities/payer-connection';
import type { PayerEndpointStore } from '#lib/payer-endpoints/payer-endpoint-store';
import type { PayerConnectionChoice, PayerDirectory } from '#lib/runs/payer-directory';
import type { PayerConnectionStore } from './payer-connection-store.ts';

/** The run core's view of payer endpoints and connections (lib/runs/payer-directory.ts), on their stores. */
export const payerDirectoryOf = (
  endpoints: Pick<PayerEndpointStore, 'get'>,
  connections: Pick<PayerConnectionStore, 'get' | 'findActive'>,
): PayerDirectory => {
  const choiceOf = (connection: StoredPayerConnection | undefined): PayerConnectionChoice | undefined =>
    connection && {
      externalId: connection.externalId,
      organizationId: connection.organizationId,
      payerId: connection.payerId,
      status: connection.status,
    };
  return {
    apiOf: async (payerId) => {
      const endpoint = await endpoints.get(payerId);
      return endpoint && { name: endpoint.name };
    },
    activeConnection: async (clientId, organizationId, payerId) =>
      choiceOf(await connections.findActive(clientId, organizationId, payerId)),
    connection: async (clientId, externalId) => choiceOf(await connections.get(clientId, externalId)),
  };
};
