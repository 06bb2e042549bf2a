import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '#lib/json/safe-json';
import {
  PayerAnswerRejected,
  PayerTimeout,
  PayerUnavailable,
  PayerUrlRefused,
  TokenRejected,
} from '#lib/payer-api/errors';
import { type FhirOperationCall, PAS_TIMEOUT_MS, postFhirOperation } from '#lib/payer-api/pas-transport';
import { MAX_PAYER_ANSWER_BYTES, retryAfterSecondsOf } from '#lib/payer-api/payer-http';

/*
 * postFhirOperation against a payer over real HTTP on loopback, one path per behaviour: `/<case>/fhir`
 * is the base URL, so `/<case>/fhir/Claim/$submit` is what is called.
 */
const FHIR = 'application/fhir+json';
const received: Array<{ url: string; headers: IncomingMessage['headers']; body: string }> = [];
/** Responses left hanging (the payer that never answers), ended after the tests. */
const hanging: ServerResponse[] = [];

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

const CASES: Record<string, (response: ServerResponse) => void> = {
  ok: (response) =>
    response.writeHead(200, { 'content-type': FHIR }).end('{"resourceType":"Bundle","type":"collection"}'),
  'outcome-400': (response) =>
    response
      .writeHead(400, { 'content-type': FHIR })
      .end('{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"required"}]}'),
  'empty-404': (response) => response.writeHead(404).end(),
  'html-200': (response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'),
  'empty-200': (response) => response.writeHead(200).end(),
  'deep-200': (response) => response.writeHead(200, { 'content-type': FHIR }).end(deep(MAX_JSON_DEPTH + 1)),
  'just-deep-enough': (response) => response.writeHead(200, { 'content-type': FHIR }).end(deep(MAX_JSON_DEPTH)),
  'inexact-200': (response) => response.writeHead(200, { 'content-type': FHIR }).end('{"value":1e400}'),
  'oversize-declared': (response) => {
    response.writeHead(200, { 'content-type': FHIR, 'content-length': String(MAX_PAYER_ANSWER_BYTES + 1) });
    response.write('{"a":"');
    hanging.push(response);
  },
  'oversize-streamed': (response) => {
    // No length: chunks until the client gives up. Never more than a few chunks past the limit.
    response.writeHead(200, { 'content-type': FHIR });
    const chunk = `"${'x'.repeat(64 * 1024)}",`;
    let sent = 0;
    const more = () => {
      while (sent < MAX_PAYER_ANSWER_BYTES * 2) {
        sent += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', more);
      }
      response.end();
    };
    response.write('[');
    response.on('error', () => undefined);
    more();
  },
  'exactly-the-limit': (response) => {
    const text = `"${'x'.repeat(MAX_PAYER_ANSWER_BYTES - 2)}"`;
    response.writeHead(200, { 'content-type': FHIR }).end(text);
  },
  never: (response) => {
    hanging.push(response);
  },
  'stalls-mid-answer': (response) => {
    response.writeHead(200, { 'content-type': FHIR });
    response.write('{"resourceType":');
    hanging.push(response);
  },
  'busy-429': (response) => response.writeHead(429, { 'retry-after': '12' }).end('slow down'),
  'down-503': (response) =>
    response.writeHead(503, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() }).end('<html>down</html>'),
  'down-502': (response) => response.writeHead(502).end(),
  'unauthorized-401': (response) =>
    response.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end('{"error":"x"}'),
  'redirect-302': (response) => response.writeHead(302, { location: '/ok/fhir/Claim/$submit' }).end(),
};

let origin: string;
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => {
    body += chunk;
  });
  request.on('end', () => {
    received.push({ url: request.url!, headers: request.headers, body });
    const name = request.url!.split('/')[1]!;
    (CASES[name] ?? ((res: ServerResponse) => res.writeHead(418).end()))(response);
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const response of hanging) response.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const call = (name: string, more: Partial<FhirOperationCall> = {}) =>
  postFhirOperation({
    baseUrl: `${origin}/${name}/fhir`,
    operation: 'Claim/$submit',
    accessToken: 'token-abc',
    body: { resourceType: 'Bundle', id: 'b-1' },
    policy: 'local',
    ...more,
  });
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('it answered'),
    (error) => error,
  );

describe('postFhirOperation', () => {
  it('POSTs FHIR JSON with the bearer token to [base]/Claim/$submit, and returns the parsed answer', async () => {
    expect(await call('ok')).toEqual({ status: 200, body: { resourceType: 'Bundle', type: 'collection' } });
    const sent = received.at(-1)!;
    expect(sent.url).toBe('/ok/fhir/Claim/$submit');
    expect(sent.headers).toMatchObject({ 'content-type': FHIR, accept: FHIR, authorization: 'Bearer token-abc' });
    expect(JSON.parse(sent.body)).toEqual({ resourceType: 'Bundle', id: 'b-1' });
    await call('ok', { baseUrl: `${origin}/ok/fhir/`, operation: 'Claim/$inquire' });
    expect(received.at(-1)!.url).toBe('/ok/fhir/Claim/$inquire');
  });

  it("returns a 4xx's OperationOutcome for the answer reader, and null for a 4xx without a body", async () => {
    expect(await call('outcome-400')).toEqual({
      status: 400,
      body: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'required' }] },
    });
    expect(await call('empty-404')).toEqual({ status: 404, body: null });
  });

  it('refuses answers that are not JSON, nest deeper than our bodies may, or hold numbers a double cannot', async () => {
    expect(await failureOf(call('html-200'))).toEqual(new PayerAnswerRejected('not_json'));
    expect(await failureOf(call('empty-200'))).toEqual(new PayerAnswerRejected('not_json'));
    expect(await failureOf(call('deep-200'))).toEqual(new PayerAnswerRejected('too_deep'));
    expect(await failureOf(call('inexact-200'))).toEqual(new PayerAnswerRejected('inexact_number'));
    expect((await call('just-deep-enough')).status).toBe(200);
  });

  it('reads at most 5 MB of an answer, whether its length is declared or not', async () => {
    expect(await failureOf(call('oversize-declared'))).toEqual(new PayerAnswerRejected('too_large'));
    const started = Date.now();
    expect(await failureOf(call('oversize-streamed'))).toEqual(new PayerAnswerRejected('too_large'));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await call('exactly-the-limit')).body).toHaveLength(MAX_PAYER_ANSWER_BYTES - 2);
  });

  it('gives up on a payer that does not answer within the timeout (PAS allows 15 s), headers or body', async () => {
    expect(PAS_TIMEOUT_MS).toBe(15_000);
    const started = Date.now();
    expect(await failureOf(call('never', { timeoutMs: 300 }))).toBeInstanceOf(PayerTimeout);
    expect(await failureOf(call('stalls-mid-answer', { timeoutMs: 300 }))).toBeInstanceOf(PayerTimeout);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('calls 429 and 5xx PayerUnavailable, with Retry-After in seconds or as a date', async () => {
    expect(await failureOf(call('busy-429'))).toMatchObject({
      name: 'PayerUnavailable',
      status: 429,
      retryAfterSeconds: 12,
    });
    const down = await failureOf(call('down-503'));
    expect(down).toBeInstanceOf(PayerUnavailable);
    expect(down.retryAfterSeconds).toBeGreaterThanOrEqual(28);
    expect(down.retryAfterSeconds).toBeLessThanOrEqual(31);
    expect(await failureOf(call('down-502'))).toMatchObject({ status: 502, retryAfterSeconds: null });
  });

  it('calls a payer that cannot be reached PayerUnavailable, without a status', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await failureOf(call('ok', { baseUrl: `http://127.0.0.1:${port}/fhir` }))).toEqual(
      new PayerUnavailable(null, null),
    );
  });

  it('calls a 401 TokenRejected, and never follows a redirect (the token would go along)', async () => {
    expect(await failureOf(call('unauthorized-401'))).toBeInstanceOf(TokenRejected);
    const before = received.length;
    expect(await failureOf(call('redirect-302'))).toEqual(new PayerAnswerRejected('redirect'));
    expect(received.length).toBe(before + 1);
  });

  it('sends nothing where the URL policy says no', async () => {
    const before = received.length;
    expect(await failureOf(call('ok', { policy: 'https' }))).toBeInstanceOf(PayerUrlRefused);
    expect(received.length).toBe(before);
  });

  it('never puts the token or the answer in its errors', async () => {
    for (const name of ['outcome-400', 'html-200', 'busy-429', 'unauthorized-401', 'never']) {
      const error = await call(name, { timeoutMs: 200 }).catch((caught: Error) => caught);
      expect(String((error as Error).message ?? '')).not.toMatch(/token-abc|hello|slow down|OperationOutcome/);
    }
  });
});

describe('retryAfterSecondsOf', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it.each([
    ['120', 120],
    [' 0 ', 0],
    ['Sun, 01 Mar 2026 12:01:30 GMT', 90],
    ['Sun, 01 Mar 2026 11:00:00 GMT', 0],
    ['soon', null],
    ['-5', null],
    ['1.5', null],
    [null, null],
  ])('reads %s as %s', (value, seconds) => {
    expect(retryAfterSecondsOf(value, now)).toBe(seconds);
  });
});
