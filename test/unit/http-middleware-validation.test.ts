import { beforeEach, describe, expect, it } from 'vitest';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { viewOnPageRequestValidator } from '#lib/validation/generated/per-schema/view-on-page-request';
import { apiGatewayEvent, invoke } from '#test/support/api-gateway-event';

/* The schema validation middleware of endpoint(): the spec's Validation result, before the handler. */

let received: unknown[];
beforeEach(() => {
  received = [];
});
const handler = endpoint<unknown>(
  async (event) => {
    received.push(event.body);
    return json(200, { ok: true });
  },
  { json: { validator: viewOnPageRequestValidator, absentBody: {} } },
);
const send = (body?: string) =>
  invoke(handler, apiGatewayEvent({ ...(body === undefined ? {} : { body }), contentType: 'application/json' }));

describe('validation middleware', () => {
  it('passes a valid body to the handler', async () => {
    expect((await send('{"clientUserId":"user-1"}')).status).toBe(200);
    expect(received).toEqual([{ clientUserId: 'user-1' }]);
  });

  it('answers 400 with the Validation result (application/json, not problem details) for an invalid one', async () => {
    const res = await send('{"clientUserId":"user-1","__proto__":1}');
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      succeeded: false,
      errors: ["/: AdditionalProperties error. must NOT have additional property '__proto__'."],
      type: 'none',
    });
    expect(received).toEqual([]);
  });

  it('validates a missing body as what absentBody stands for', async () => {
    const res = await send();
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(["/: Required error. must have required property 'clientUserId'."]);
    expect(received).toEqual([]);
  });
});
