import http from 'node:http';
import { baseUrl } from '#test/support/api';

/**
 * The wire side of the hostile-input suite (test/integration/hostile-input.test.ts): raw node:http
 * requests (fetch would normalize paths, merge headers and add a content type), the rules every
 * answer must follow, and JSON compared by value with numbers exact and `__proto__` an ordinary key.
 */

/** A case that gets no answer in this time fails; the server is then given time to finish before the next one. */
export const REQUEST_TIMEOUT_MS = 10_000;

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

export class NoAnswer extends Error {}

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

export const shorten = (text: string, max = 160) =>
  text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;

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

/* ------------------------------------------------------------------------------------------------
 * JSON by value. Parsed without recursion (bodies nest 10,000 deep), objects as Maps (so
 * `__proto__` is a key like any other), numbers as exact decimals (so 1e400 is not Infinity and a
 * 41-digit integer keeps its digits).
 */

export type JsonTree =
  | { t: 'object'; members: Map<string, JsonTree> }
  | { t: 'array'; items: JsonTree[] }
  | { t: 'string'; value: string }
  | { t: 'number'; value: string }
  | { t: 'literal'; value: boolean | null };

/** A number literal's exact value: `-1.50e2` → `-15e1`; every zero → `0`. */
export const exactNumber = (source: string): string => {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(source);
  if (!match) throw new SyntaxError(`not a JSON number: ${source}`);
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const allDigits = `${whole}${fraction}`.replace(/^0+/, '');
  if (allDigits === '') return '0';
  const digits = allDigits.replace(/0+$/, '');
  const scale = BigInt(exponent) - BigInt(fraction.length) + BigInt(allDigits.length - digits.length);
  return `${sign}${digits}e${scale}`;
};

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings exclude exactly these characters.
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WHITESPACE = /[ \t\n\r]*/y;

type Frame = { node: Extract<JsonTree, { t: 'object' }>; key: string } | { node: Extract<JsonTree, { t: 'array' }> };

export const parseJsonTree = (text: string): JsonTree => {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxError(`not JSON at position ${at}`);
  };
  const skip = () => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const token = (pattern: RegExp) => {
    pattern.lastIndex = at;
    const match = pattern.exec(text) ?? fail();
    at = pattern.lastIndex;
    return match[0];
  };
  const key = () => {
    skip();
    const name = JSON.parse(token(STRING)) as string;
    skip();
    if (text[at++] !== ':') fail();
    return name;
  };
  const frames: Frame[] = [];
  for (;;) {
    skip();
    let value: JsonTree;
    const char = text[at];
    if (char === '{' || char === '[') {
      at++;
      skip();
      const node: JsonTree = char === '{' ? { t: 'object', members: new Map() } : { t: 'array', items: [] };
      if (text[at] === (char === '{' ? '}' : ']')) {
        at++;
        value = node;
      } else {
        frames.push(node.t === 'object' ? { node, key: key() } : { node });
        continue;
      }
    } else if (char === '"') value = { t: 'string', value: JSON.parse(token(STRING)) };
    else if (text.startsWith('true', at)) value = { t: 'literal', value: true };
    else if (text.startsWith('false', at)) value = { t: 'literal', value: false };
    else if (text.startsWith('null', at)) value = { t: 'literal', value: null };
    else value = { t: 'number', value: exactNumber(token(NUMBER)) };
    if (value.t === 'literal') at += String(value.value).length;
    // Hand the value to its container, closing every container that ends here.
    for (;;) {
      const frame = frames.at(-1);
      if (!frame) {
        skip();
        if (at !== text.length) fail();
        return value;
      }
      if (frame.node.t === 'object') frame.node.members.set((frame as { key: string }).key, value);
      else frame.node.items.push(value);
      skip();
      if (text[at] === ',') {
        at++;
        if (frame.node.t === 'object') (frame as { key: string }).key = key();
        break;
      }
      if (text[at++] !== (frame.node.t === 'object' ? '}' : ']')) fail();
      frames.pop();
      value = frame.node;
    }
  }
};

const describeTree = (tree: JsonTree | undefined): string => {
  if (!tree) return 'nothing';
  if (tree.t === 'object') return `an object of ${tree.members.size} members`;
  if (tree.t === 'array') return `an array of ${tree.items.length}`;
  if (tree.t === 'number') return `the number ${shorten(tree.value, 50)}`;
  if (tree.t === 'string') return `the string ${shorten(JSON.stringify(tree.value), 50)}`;
  return String(tree.value);
};

const pointerStep = (name: string | number) => `/${String(name).replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** The first difference between two documents (member order aside), or undefined when they are equal. */
export const differenceOf = (expected: JsonTree, actual: JsonTree, expectedAs = 'sent'): string | undefined => {
  const pending: [JsonTree | undefined, JsonTree | undefined, string][] = [[expected, actual, '']];
  while (pending.length > 0) {
    const [want, got, pointer] = pending.pop()!;
    const where = pointer || '/';
    const differs = () => `${where}: ${expectedAs} ${describeTree(want)}, stored ${describeTree(got)}`;
    if (!want || !got || want.t !== got.t) return differs();
    if (want.t === 'object' && got.t === 'object') {
      for (const name of new Set([...want.members.keys(), ...got.members.keys()])) {
        pending.push([want.members.get(name), got.members.get(name), pointer + pointerStep(name)]);
      }
    } else if (want.t === 'array' && got.t === 'array') {
      if (want.items.length !== got.items.length)
        return `${where}: sent ${describeTree(want)}, stored ${describeTree(got)}`;
      for (const [i, item] of want.items.entries()) pending.push([item, got.items[i], pointer + pointerStep(i)]);
    } else if ((want as { value: unknown }).value !== (got as { value: unknown }).value) {
      return differs();
    }
  }
  return undefined;
};

/** RFC 7396 as written: every member name is data, `__proto__` included. */
export const mergePatch = (target: JsonTree, patch: JsonTree): JsonTree => {
  if (patch.t !== 'object') return patch;
  const copy = (tree: JsonTree | undefined): Extract<JsonTree, { t: 'object' }> => ({
    t: 'object',
    members: tree?.t === 'object' ? new Map(tree.members) : new Map(),
  });
  const result = copy(target);
  const pending: [Extract<JsonTree, { t: 'object' }>, Extract<JsonTree, { t: 'object' }>][] = [[result, patch]];
  while (pending.length > 0) {
    const [into, from] = pending.pop()!;
    for (const [name, value] of from.members) {
      if (value.t === 'literal' && value.value === null) into.members.delete(name);
      else if (value.t === 'object') {
        const child = copy(into.members.get(name));
        into.members.set(name, child);
        pending.push([child, value]);
      } else into.members.set(name, value);
    }
  }
  return result;
};

/** The tree without the members the service adds to a representation. */
export const withoutMembers = (tree: JsonTree, names: string[]): JsonTree => {
  if (tree.t !== 'object') return tree;
  const members = new Map(tree.members);
  for (const name of names) members.delete(name);
  return { t: 'object', members };
};

export const memberOf = (tree: JsonTree, name: string): JsonTree | undefined =>
  tree.t === 'object' ? tree.members.get(name) : undefined;
