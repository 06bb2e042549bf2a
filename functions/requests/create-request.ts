import { clientIdOf, endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { etagOf, type RequestDocument, representationOf, requestService } from '#lib/requests/requests';

const requests = requestService(dynamoRequestStore);

/** POST /api/external/v1.1/Requests: creates; 409 when the externalId exists. */
export const handler = endpoint<RequestDocument & { externalId: string }>(
  async (event) => {
    const { request } = await requests.create(clientIdOf(event), event.body);
    return json(201, representationOf(request), {
      ETag: etagOf(request),
      Location: `/api/external/v1.1/Requests/${encodeURIComponent(request.externalId)}`,
    });
  },
  { json: { schema: 'Request' } },
);
