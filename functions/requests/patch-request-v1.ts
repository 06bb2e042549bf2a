import { clientIdOf } from '#lib/http/api-event';
import { endpoint } from '#lib/http/endpoint';
import { header, pathId } from '#lib/http/path';
import { badRequest } from '#lib/http/problem';
import { json } from '#lib/http/response';
import { etagOf, representationOf } from '#lib/requests/request-document';
import { requests } from '#lib/requests/service';
import { requestAddressedByPathValidator } from '#lib/validation/generated/per-schema/request-addressed-by-path';

/** PATCH /api/external/v1/Requests/{appointmentId}: JSON Merge Patch; the merged request is validated. */
export const handler = endpoint<unknown>(
  async (event) => {
    const appointmentId = pathId(event, 'appointmentId');
    const patch = event.body;
    if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
      throw badRequest('A merge patch must be a JSON object (RFC 7396).');
    }
    const { request } = await requests.patch(
      clientIdOf(event),
      appointmentId,
      patch as Record<string, unknown>,
      requestAddressedByPathValidator,
      header(event, 'if-match'),
    );
    return json(200, representationOf(request), { ETag: etagOf(request) });
  },
  { json: { mediaTypes: ['application/merge-patch+json'] } },
);
