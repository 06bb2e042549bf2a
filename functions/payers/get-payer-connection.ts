import { scopeOf } from '#lib/http/api-event';
import { notModified } from '#lib/http/conditional';
import { endpoint } from '#lib/http/endpoint';
import { pathId } from '#lib/http/path';
import { absoluteUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { etagOf, representationOf } from '#lib/payer-connections/payer-connection-representation';
import { payerConnections } from '#lib/payer-connections/service';

/** GET /api/external/v1.1/Payers/connections/{externalId}: one connection, with its jwksUri. */
export const handler = endpoint(async (event) => {
  const connection = await payerConnections.get(scopeOf(event), pathId(event, 'externalId'));
  const etag = etagOf(connection);
  return notModified(event, etag) ?? json(200, representationOf(connection, absoluteUrl(event, '')), { ETag: etag });
});
