import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { idempotentRequests } from '#lib/http/idempotency';
import { resourceUrl } from '#lib/http/resource-url';
import { json } from '#lib/http/response';
import { etagOf, type RequestDocument, representationOf } from '#lib/requests/request-document';
import { requests } from '#lib/requests/service';
import { requestValidator } from '#lib/validation/generated/per-schema/request';

/**
 * POST /api/external/v1.1/Requests: creates; 201 + Location; 409 when the externalId exists.
 * Idempotent with an Idempotency-Key header (lib/http/idempotency.ts).
 */
export const handler = endpoint<RequestDocument & { externalId: string }>(
  async (event) => {
    const { request } = await requests.create(clientIdOf(event), event.body);
    return json(201, representationOf(request), {
      ETag: etagOf(request),
      Location: resourceUrl(event, 'requests/get-request', { externalId: request.externalId }),
    });
  },
  { json: { validator: requestValidator }, idempotency: idempotentRequests() },
);
