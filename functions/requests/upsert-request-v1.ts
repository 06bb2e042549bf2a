import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { json } from '#lib/http/response';
import { etagOf, type RequestDocument, representationOf } from '#lib/requests/request-document';
import { requests } from '#lib/requests/service';
import { requestAddressedByPathValidator } from '#lib/validation/generated/per-schema/request-addressed-by-path';

/** PUT /api/external/v1/Requests/{appointmentId}: create or replace (201 on create, 200 on replace). */
export const handler = endpoint<RequestDocument>(
  async (event) => {
    const appointmentId = pathId(event, 'appointmentId');
    const { request, created } = await requests.upsert(
      clientIdOf(event),
      appointmentId,
      event.body,
      header(event, 'if-match'),
    );
    return json(created ? 201 : 200, representationOf(request), { ETag: etagOf(request) });
  },
  { json: { validator: requestAddressedByPathValidator } },
);
