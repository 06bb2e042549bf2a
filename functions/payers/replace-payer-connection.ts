import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { absoluteUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import type { PayerConnectionInput } from '#lib/payer-connections/payer-connection-input';
import { etagOf, representationOf } from '#lib/payer-connections/payer-connection-representation';
import { payerConnections } from '#lib/payer-connections/service';
import { payerConnectionReplacementValidator } from '#lib/validation/generated/per-schema/payer-connection-replacement';

/**
 * PUT /api/external/v1.1/Payers/connections/{externalId}: replaces every field (status: active or
 * disabled; active clears attention). If-Match or body.version: 412 when stale.
 */
export const handler = endpoint<PayerConnectionInput>(
  async (event) => {
    const connection = await payerConnections.replace(
      scopeOf(event),
      pathId(event, 'externalId'),
      event.body,
      header(event, 'if-match'),
    );
    return json(200, representationOf(connection, absoluteUrl(event, '')), { ETag: etagOf(connection) });
  },
  { json: { validator: payerConnectionReplacementValidator } },
);
