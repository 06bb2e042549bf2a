import { randomUUID } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { type GatewayProblem, problemBody } from '#lib/http/gateway-responses';
import { baseHeaders } from '#lib/http/response';

/* Sending a proxy result as API Gateway does, and the edge's own answers to what never becomes a request. */

/**
 * A proxy result's headers as API Gateway (REST) sends them: a name in both `headers` and
 * `multiValueHeaders` gets every value of the latter, plus the former's unless it is among them
 * (several Set-Cookie lines need multiValueHeaders). Names match whatever their case.
 */
export const responseHeaders = (result: Pick<APIGatewayProxyResult, 'headers' | 'multiValueHeaders'>) => {
  const merged = new Map<string, { name: string; values: string[] }>();
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) {
    merged.set(name.toLowerCase(), { name, values: values.map(String) });
  }
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    const entry = merged.get(name.toLowerCase());
    if (!entry) merged.set(name.toLowerCase(), { name, values: [String(value)] });
    else if (!entry.values.includes(String(value))) entry.values.push(String(value));
  }
  return [...merged.values()];
};

export const send = (res: ServerResponse, result: APIGatewayProxyResult, requestId: string) => {
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  res.statusCode = result.statusCode;
  for (const { name, values } of responseHeaders(result))
    res.setHeader(name, values.length === 1 ? values[0]! : values);
  res.setHeader('x-amzn-RequestId', requestId);
  res.setHeader('Content-Length', body.length);
  res.end(body);
};

const REQUEST_HEADERS_TOO_LARGE: GatewayProblem = {
  type: 'DEFAULT_4XX',
  status: 431,
  title: 'Request Header Fields Too Large',
  detail: 'The request line and headers exceed the 16 KiB the gateway reads.',
};
const MALFORMED_REQUEST: GatewayProblem = {
  type: 'DEFAULT_4XX',
  status: 400,
  title: 'Bad Request',
  detail: 'The request is not well-formed HTTP.',
};
const EXPECTATION_FAILED: GatewayProblem = {
  type: 'DEFAULT_4XX',
  status: 417,
  title: 'Expectation Failed',
  detail: 'Only Expect: 100-continue is supported.',
};

/**
 * What Node's HTTP parser refuses before a request exists (headers over its 16 KiB, a malformed request
 * line) and Expect values other than 100-continue would otherwise get Node's bare answers; the edge of a
 * deployed API has its own, so these are the local stand-in's, in the same problem-details shape.
 */
export function answerEdgeRefusals(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    const problem = error.code === 'HPE_HEADER_OVERFLOW' ? REQUEST_HEADERS_TOO_LARGE : MALFORMED_REQUEST;
    const body = JSON.stringify(problemBody(problem));
    const headers = { ...baseHeaders, 'Content-Type': 'application/problem+json; charset=utf-8' };
    socket.end(
      `HTTP/1.1 ${problem.status} ${problem.title}\r\n` +
        Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('') +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  server.on('checkExpectation', (_req, res: ServerResponse) => {
    send(
      res,
      {
        statusCode: EXPECTATION_FAILED.status,
        headers: { ...baseHeaders, 'Content-Type': 'application/problem+json; charset=utf-8' },
        body: JSON.stringify(problemBody(EXPECTATION_FAILED)),
      },
      randomUUID(),
    );
  });
}
