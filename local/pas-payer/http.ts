import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OperationOutcome, OperationOutcomeIssue } from '@medplum/fhirtypes';
import { JsonBodyRefused, parseJsonBody } from '#lib/json/safe-json';

/* How the payer reads requests and answers them: bounded bodies, JSON and FHIR JSON, refusals. */

/** Headers of every answer: nothing is cached (tokens, PHI), nothing sniffed, no referrer. */
export const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

const FHIR_JSON = 'application/fhir+json; charset=utf-8';

/** A refusal: its status, its body (JSON, or FHIR JSON for the FHIR routes) and extra headers. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`refused with ${status}`);
  }
}

export const sendJson = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  contentType = 'application/json; charset=utf-8',
) => {
  res.writeHead(status, { ...BASE_HEADERS, 'content-type': contentType, ...headers });
  res.end(JSON.stringify(body));
};

export const sendFhir = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  sendJson(res, status, body, headers, FHIR_JSON);

export const outcome = (issues: OperationOutcomeIssue[]): OperationOutcome => ({
  resourceType: 'OperationOutcome',
  issue: issues,
});

/** One error issue: a FHIR refusal's body. */
export const outcomeOf = (code: OperationOutcomeIssue['code'], text: string, expression?: string[]) =>
  outcome([{ severity: 'error', code, details: { text }, ...(expression ? { expression } : {}) }]);

/** The media type of the request, lower case, without parameters. */
export const mediaTypeOf = (req: IncomingMessage) =>
  (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * The body, at most `maxBytes`: past it, the `tooLarge` refusal, once the request has been read (a client
 * that is answered before it finished sending sees a reset connection rather than the answer).
 */
export const readBody = (req: IncomingMessage, maxBytes: number, tooLarge: () => Refusal): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on('end', () => (size > maxBytes || declared > maxBytes ? reject(tooLarge()) : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
  });

/** A JSON body, with the API's own limits (depth, exact numbers); `invalid` makes the refusal. */
export const parseJson = (body: Buffer, invalid: (message: string) => Refusal): unknown => {
  try {
    return parseJsonBody(body.toString('utf8'));
  } catch (error) {
    if (error instanceof JsonBodyRefused) throw invalid(error.message);
    throw error;
  }
};
