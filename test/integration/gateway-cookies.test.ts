import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteRow } from '#lib/routes/route-table';
import { createGateway } from '#local/gateway';
import { responseHeaders } from '#local/gateway/responses';

/*
 * The local gateway passes cookies as API Gateway (REST, proxy integration) does: every Cookie field
 * of the request into the event (the last in `headers`, all in `multiValueHeaders`), and a result's
 * Set-Cookie lines from `headers` and `multiValueHeaders`, merged.
 */
const route: RouteRow = {
  method: 'GET',
  path: '/api/external/test/cookies',
  handler: 'echo-cookies',
  auth: 'public',
};

/** Echoes the cookies it was given and sets three: one in `headers`, two in `multiValueHeaders`. */
const echo = async (event: APIGatewayProxyEvent) => ({
  statusCode: 200,
  headers: { 'Content-Type': 'application/json', 'Set-Cookie': 'single=1; Path=/; HttpOnly' },
  multiValueHeaders: { 'set-cookie': ['first=2; Path=/a', 'second=3; Path=/b; SameSite=Strict'] },
  body: JSON.stringify({ cookie: event.headers.Cookie ?? null, all: event.multiValueHeaders.Cookie ?? null }),
});

let server: ReturnType<typeof createGateway>;
let port: number;
beforeAll(async () => {
  server = createGateway({ routes: [route], loadHandler: async () => echo as never });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A GET with its header fields exactly as given (several Cookie fields, as HTTP/2 browsers send them). */
const get = (rawHeaders: string[]) =>
  new Promise<{ setCookies: string[]; body: { cookie: string | null; all: string[] | null } }>((resolve, reject) => {
    // Raw header pairs: Node adds no Host to them.
    const headers = ['Host', `127.0.0.1:${port}`, ...rawHeaders];
    const req = request({ host: '127.0.0.1', port, path: route.path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
      });
      res.on('end', () => {
        try {
          resolve({ setCookies: res.headers['set-cookie'] ?? [], body: JSON.parse(text) });
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });

describe('local gateway: cookies', () => {
  it('hands the request’s Cookie fields to the function: the last in headers, every one in multiValueHeaders', async () => {
    const { body } = await get(['Cookie', 'a=1; b=2', 'Cookie', 'c=3']);
    expect(body).toEqual({ cookie: 'c=3', all: ['a=1; b=2', 'c=3'] });
  });

  it('sends every Set-Cookie of headers and multiValueHeaders, each on its own line', async () => {
    const { setCookies } = await get([]);
    expect(setCookies).toEqual([
      'first=2; Path=/a',
      'second=3; Path=/b; SameSite=Strict',
      'single=1; Path=/; HttpOnly',
    ]);
  });

  it('merges as API Gateway does: a value in both maps is sent once, names match whatever their case', () => {
    expect(
      responseHeaders({
        headers: { 'Set-Cookie': 'a=1', ETag: '"1"' },
        multiValueHeaders: { 'set-cookie': ['a=1', 'b=2'] },
      }),
    ).toEqual([
      { name: 'set-cookie', values: ['a=1', 'b=2'] },
      { name: 'ETag', values: ['"1"'] },
    ]);
  });
});
