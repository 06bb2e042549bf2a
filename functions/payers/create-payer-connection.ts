import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { absoluteUrl, resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import type { NewPayerConnection } from '#lib/payer-connections/payer-connection-input';
import { etagOf, representationOf } from '#lib/payer-connections/payer-connection-representation';
import { payerConnections } from '#lib/payer-connections/service';
import { payerConnectionValidator } from '#lib/validation/generated/per-schema/payer-connection';

/**
 * POST /api/external/v1.1/Payers/connections: creates a connection in the organization of
 * body.clientUserId. 201 + Location; 404 unknown clientUserId; 409 if the externalId exists or the
 * organization is at its quota; 422 (`no_payer_api`) for a payer without an API in the directory.
 * Idempotent with an Idempotency-Key header (lib/http/idempotency.ts).
 */
export const handler = endpoint<NewPayerConnection>(
  async (event) => {
    const connection = await payerConnections.create(scopeOf(event), event.body);
    return json(201, representationOf(connection, absoluteUrl(event, '')), {
      ETag: etagOf(connection),
      Location: resourceUrl(event, 'payers/get-payer-connection', { externalId: connection.externalId }),
    });
  },
  { json: { validator: payerConnectionValidator }, idempotency: idempotentRequests() },
);
