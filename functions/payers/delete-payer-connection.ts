import { scopeOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { noContent } from '#lib/http/response';
import { payerConnections } from '#lib/payer-connections/service';

/** DELETE /api/external/v1.1/Payers/connections/{externalId}: 204; 412 on a stale If-Match. */
export const handler = endpoint(async (event) => {
  await payerConnections.remove(scopeOf(event), pathId(event, 'externalId'), header(event, 'if-match'));
  return noContent();
});
