import type { StoredPayerConnection } from '#lib/entities/payer-connection';
import { jwksPathOf, keySetIdOf } from '#lib/payer-api/signing-keys/key-set-id';

/**
 * Where the payer fetches the public keys of our client assertions for this connection: the client's
 * key set (one per client: docs/payer-connections.md, "Signing keys"), under the API's public base URL
 * as the caller reached it (lib/http/resource-url.ts `absoluteUrl(event, '')`).
 */
const jwksUriOf = (apiBaseUrl: string, clientId: string) => `${apiBaseUrl}${jwksPathOf(keySetIdOf(clientId))}`;

/** What clients read: the payer's client_id as `clientId`, as they wrote it; our own client id never. */
export const representationOf = (connection: StoredPayerConnection, apiBaseUrl: string) => ({
  externalId: connection.externalId,
  clientUserId: connection.clientUserId,
  organizationId: connection.organizationId,
  payerId: connection.payerId,
  clientId: connection.payerClientId,
  status: connection.status,
  statusReason: connection.statusReason,
  jwksUri: jwksUriOf(apiBaseUrl, connection.clientId),
  createdAt: connection.createdAt,
  updatedAt: connection.updatedAt,
  version: connection.version,
});

export const etagOf = (connection: Pick<StoredPayerConnection, 'version'>) => `"${connection.version}"`;
