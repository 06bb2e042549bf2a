import http from 'node:http';
import { baseUrl } from '#test/support/api';
import { shorten } from './json-tree.ts';

/**
 * The wire side of the hostile-input suite (test/integration/hostile-input.test.ts): raw node:http
 * requests (fetch would normalize paths, merge headers and add a content type), and the rules every
 * answer must follow.
 */

/** A case that gets no answer in this time fails; the server is then given time to finish before the next one. */
const REQUEST_TIMEOUT_MS = 10_000;

export interface RawRequest {
  method: string;
  /** Sent verbatim: percent-encoding, dot segments and all. */
  path: string;
  /** [name, value] pairs sent as they are: duplicates and names such as `__proto__` included. */
  headers?: [string, string][];
  body?: Uint8Array;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  elapsedMs: number;
}

const target = new URL(baseUrl);
const agent = new http.Agent({ keepAlive: true });

class NoAnswer extends Error {}

const exchange = (request: RawRequest): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    const headers: [string, string][] = [['host', target.host], ...(request.headers ?? [])];
    if (request.body && !headers.some(([name]) => name.toLowerCase() === 'content-length')) {
      headers.push(['content-length', String(request.body.length)]);
    }
    const outgoing = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.path,
        agent,
        headers: headers.flat(),
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text: Buffer.concat(chunks).toString('utf8'),
            elapsedMs: performance.now() - started,
          }),
        );
      },
    );
    outgoing.setTimeout(REQUEST_TIMEOUT_MS, () =>
      outgoing.destroy(new NoAnswer(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)),
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });

/** After a timeout the server may still be busy with the case: wait until it answers promptly again. */
const untilResponsive = async () => {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const answered = await exchange({ method: 'GET', path: '/api/external/v1.1/Schemas' }).then(
      (res) => res.elapsedMs < 1_000,
      () => false,
    );
    if (answered) return;
  }
};

export const send = async (request: RawRequest): Promise<RawResponse> => {
  try {
    return await exchange(request);
  } catch (error) {
    if (error instanceof NoAnswer) await untilResponsive();
    throw new AnswerRuleBroken(`${request.method} ${shorten(request.path)}: ${(error as Error).message}`);
  }
};

/** A broken rule; its message is what fast-check prints next to the counterexample. */
export class AnswerRuleBroken extends Error {}

const broken = (res: RawResponse, rule: string): never => {
  throw new AnswerRuleBroken(
    `${rule}; got ${res.status} ${res.headers['content-type'] ?? '(no content type)'}: ${shorten(res.text, 300)}`,
  );
};

export interface AnswerRules {
  /** Strings the answer must never contain, whatever its status (write-only secrets). */
  secrets?: string[];
  /** Strings an error or a Validation result must not contain: body values over 100 characters, markers. */
  notEchoed?: string[];
  /** HEAD: no body to inspect. */
  head?: boolean;
}

// A frame of a Node stack trace ("at fn (/path/file.ts:12:5)"), or a path into the code.
const STACK_TRACE = /\bat (?:\S+ )?\(?(?:file:|node:|\/)\S*:\d+:\d+|node_modules\/|\.(?:ts|js|mjs|cjs):\d+:\d+/;

const isProblem = (res: RawResponse) => /^application\/problem\+json\b/.test(res.headers['content-type'] ?? '');
const isJson = (res: RawResponse) => /^application\/(?:[\w.-]+\+)?json\b/.test(res.headers['content-type'] ?? '');

const parsed = (res: RawResponse): any => {
  try {
    return JSON.parse(res.text);
  } catch {
    return broken(res, 'the body is not the JSON its content type says');
  }
};

export const isValidationResult = (body: any) =>
  body !== null &&
  typeof body === 'object' &&
  Object.keys(body).sort().join() === 'errors,succeeded,type' &&
  typeof body.succeeded === 'boolean' &&
  Array.isArray(body.errors) &&
  body.errors.every((error: unknown) => typeof error === 'string') &&
  body.type === 'none' &&
  body.succeeded === (body.errors.length === 0);

/**
 * What every answer to hostile input must be: never a 5xx; a 4xx is RFC 9457 problem details or,
 * for a body that fails its schema, the spec's Validation result (400); no stack trace; no echo of
 * long values or secrets; `Cache-Control: no-store` as on every response.
 */
export const checkAnswer = (res: RawResponse, rules: AnswerRules = {}): void => {
  if (res.status >= 500) broken(res, 'a 5xx');
  if (res.status < 200) broken(res, 'no final status');
  if (STACK_TRACE.test(res.text)) broken(res, 'a stack trace in the answer');
  for (const secret of rules.secrets ?? []) {
    if (res.text.includes(secret) || res.text.includes(jsonEscaped(secret))) broken(res, 'a write-only secret echoed');
  }
  const body = res.text && isJson(res) ? parsed(res) : undefined;
  if (!(res.headers['cache-control'] ?? '').includes('no-store')) broken(res, 'no Cache-Control: no-store');
  if (res.status >= 400 && !rules.head) {
    if (isProblem(res)) {
      if (
        typeof body?.type !== 'string' ||
        typeof body.title !== 'string' ||
        body.status !== res.status ||
        typeof body.detail !== 'string'
      ) {
        broken(res, 'problem details without type, title, status (the response status) and detail');
      }
    } else if (!(res.status === 400 && isJson(res) && isValidationResult(body) && !body.succeeded)) {
      broken(res, 'a 4xx that is neither problem details nor a failed Validation result');
    }
  }
  if (res.status >= 400 || isValidationResult(body)) {
    for (const value of rules.notEchoed ?? []) {
      // Error texts may quote a value of up to 100 characters: 101 in a row is an echo.
      const needle = value.slice(0, 101);
      if (res.text.includes(needle) || res.text.includes(jsonEscaped(needle).slice(0, 101))) {
        broken(res, `a body value echoed (${shorten(needle, 40)})`);
      }
    }
  }
};

const jsonEscaped = (text: string) => JSON.stringify(text).slice(1, -1);
