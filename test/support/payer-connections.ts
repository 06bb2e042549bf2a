import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { payerEndpointDirectory } from '#lib/payer-endpoints/payer-endpoints';
import { uniqueId } from './api.ts';

/** Payer connections' test data: the payers they are to, and their bodies (docs/payer-connections.md). */

export const PAYER_CONNECTIONS = '/api/external/v1.1/Payers/connections';

/** The directory the local stack's admin CLI writes, written here directly (the test stack's table). */
const directory = payerEndpointDirectory({ store: dynamoPayerEndpointStore, urlPolicy: () => 'local' });

/** A payer of its own with an API in the directory (the test stack's table is shared by every test file). */
export const payerWithApi = async (label = 'PAYER') => {
  const payerId = uniqueId(label).toUpperCase();
  await directory.set({
    payerId,
    name: `${label} health plan`,
    fhirBaseUrl: 'http://127.0.0.1:9/fhir',
    tokenUrl: 'http://127.0.0.1:9/auth/token',
  });
  return payerId;
};

/** A payer id no endpoint has. */
export const payerWithoutApi = () => uniqueId('NOAPI').toUpperCase();

/** A client_id as payers issue them (a UUID here). */
export const payerClientId = () => `cid-${crypto.randomUUID()}`;

export const connectionBody = (clientUserId: string, payerId: string, overrides: Record<string, unknown> = {}) => ({
  externalId: uniqueId('pconn'),
  clientUserId,
  payerId,
  clientId: payerClientId(),
  ...overrides,
});

/** A connection's body for PUT: what its representation says of the fields a client writes. */
export const connectionReplacementOf = (
  connection: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
) => {
  const { clientUserId, payerId, clientId } = connection;
  return { clientUserId, payerId, clientId, ...overrides };
};
