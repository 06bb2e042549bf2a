import httpMultipartBodyParser from '@middy/http-multipart-body-parser';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { apiGatewayEvent, invoke } from '#test/support/api-gateway-event';

/*
 * The problem details middleware of endpoint(): ours and the domain's errors (http-domain-errors.test.ts),
 * and Middy's HttpError contract (statusCode, expose), so that any official middleware plugs in.
 */

/** An error shaped as @middy/util's createError makes it. */
const httpError = (statusCode: number, message: string, extra: { expose?: boolean } = {}) =>
  Object.assign(new Error(message, { cause: { package: '@middy/example', data: 'Sensitive-Name' } }), {
    statusCode,
    ...extra,
  });

const answerTo = (error: unknown) =>
  invoke(
    endpoint(async () => {
      throw error;
    }),
    apiGatewayEvent({}),
  );

let lines: string[] = [];
const logged = () => lines.join('');
const captureLogs = () => {
  vi.spyOn(process.stderr, 'write').mockImplementation((line) => {
    lines.push(String(line));
    return true;
  });
};
afterEach(() => {
  vi.restoreAllMocks();
  lines = [];
});

describe('problem details middleware', () => {
  it('answers a Middy HttpError with its status and message, never its cause', async () => {
    const res = await answerTo(httpError(422, 'Invalid or malformed JSON was provided'));
    expect(res.status).toBe(422);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual({
      type: 'about:blank',
      title: 'Unprocessable Entity',
      status: 422,
      detail: 'Invalid or malformed JSON was provided',
      requestId: 'fn-1',
    });
    expect(JSON.stringify(res.body)).not.toContain('Sensitive');
  });

  it('keeps the message of an HttpError not to be exposed to itself', async () => {
    const hidden = await answerTo(httpError(403, 'Key abc123 is revoked', { expose: false }));
    expect(hidden).toMatchObject({ status: 403, body: { detail: 'Forbidden' } });
    captureLogs();
    const server = await answerTo(httpError(503, 'Table Patients throttled'));
    expect(server).toMatchObject({
      status: 503,
      body: { detail: 'An unexpected error occurred. It has been logged.' },
    });
    expect(logged()).toContain('Unhandled error');
    expect(logged()).not.toContain('Patients');
  });

  it('treats anything else as unexpected: a logged 500 that says nothing of the error', async () => {
    captureLogs();
    for (const error of [new Error('Sensitive-Name'), httpError(200, 'Sensitive-Name'), { statusCode: 404 }, 'text']) {
      const res = await answerTo(error);
      expect(res.status).toBe(500);
      expect(res.body.detail).toBe('An unexpected error occurred. It has been logged.');
    }
    expect(logged()).not.toContain('Sensitive');
  });

  it('lets an official Middy middleware plug into the stack: its refusals become problem details', async () => {
    const handler = endpoint(async () => json(200, {})).use(httpMultipartBodyParser());
    const res = await invoke(handler, apiGatewayEvent({ body: '{}', contentType: 'application/json' }));
    expect(res.status).toBe(415);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 415, title: 'Unsupported Media Type', detail: 'Unsupported Media Type' });
    expect(JSON.stringify(res.body)).not.toContain('application/json');
  });
});
