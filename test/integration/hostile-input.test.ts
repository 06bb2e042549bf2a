import { GetCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { attachmentEntity } from '#lib/entities/attachment';
import { portalAccountEntity } from '#lib/entities/portal-account';
import { requestEntity } from '#lib/entities/request';
import { call, newTenant, uniqueId } from '#test/support/api';
import { validRequest } from '#test/support/fixtures';
import {
  AnswerRuleBroken,
  type AnswerRules,
  checkAnswer,
  differenceOf,
  isValidationResult,
  type JsonTree,
  memberOf,
  mergePatch,
  parseJsonTree,
  type RawResponse,
  send,
  withoutMembers,
} from '#test/support/hostile-http';
import {
  apiRoutes,
  type Body,
  type BodyCase,
  bodyWithManyErrors,
  bodyWithNumber,
  bodyWithPrototypeKey,
  bytesMutation,
  type CaseIds,
  caseIds,
  deeplyNestedBody,
  HTTP_METHODS,
  hostileSegment,
  ID,
  jsonText,
  longString,
  longStrings,
  mostErrors,
  mutatedBody,
  prototypeKey,
  type RouteTarget,
  removeAt,
  SECRET_PASSWORD,
  SegmentCase,
  secretsOf,
  targetOf,
  type World,
} from '#test/support/hostile-inputs';
import { download, upload } from './attachments-support.ts';

/**
 * Hostile input against every route of the route table, as properties (fast-check): mutated and
 * pathological bodies, raw bytes, path ids, headers and query names, methods and content types. Every
 * answer must be a documented 4xx of the right shape (problem details, or the Validation result for a
 * schema failure) or, where the input happens to be valid, a normal answer whose stored data reads back
 * exactly as sent; never a 5xx, a stack trace or an echo. Sentinel data of the same tenant, never
 * addressed by a case, must be unchanged at the end.
 *
 * HOSTILE_SEED picks another fixed seed (a failure prints the seed and path that reproduce it);
 * HOSTILE_RUNS multiplies the number of cases (e.g. 10 for a long local run).
 */
const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_122);
const RUNS = Number(process.env.HOSTILE_RUNS ?? 1);
/** A body with thousands of schema errors must be answered this fast (linear work takes ~0.2 s; quadratic, 30 s). */
const MANY_ERRORS_BUDGET_MS = 5_000;
const PROPERTY_TIMEOUT_MS = 150_000;

const v11 = '/api/external/v1.1';
const SERVICE_MEMBERS = ['authorization', 'createdAt', 'updatedAt', 'version'];
const PORTAL_FIELDS = ['clientUserId', 'portalId', 'payerIds', 'displayName', 'username', 'status'];

let world: World;
let clientId: string;
let targets: RouteTarget[];
let before: Awaited<ReturnType<typeof sentinelSnapshot>>;

const cases = new Map<string, number>();
const count = (group: string) => cases.set(group, (cases.get(group) ?? 0) + 1);

const assertProperty = <T>(
  arbitrary: fc.Arbitrary<T>,
  numRuns: number,
  predicate: (value: T) => Promise<void>,
  examples: T[] = [],
) =>
  fc.assert(fc.asyncProperty(arbitrary, predicate), {
    seed: SEED,
    examples: examples.map((example) => [example] as [T]),
    numRuns: Math.max(1, Math.round(numRuns * RUNS)),
    // Shrinking sends requests too: bound it, and report a property that could not finish as failed.
    plugins: [fc.interruptAfterTimeLimit(PROPERTY_TIMEOUT_MS - 20_000, { failOnInterrupt: true })],
  });

const takesBody = (target: RouteTarget) => target.mediaTypes.length > 0;
/** Routes without a body still get every body case, a few times (the body must be ignored safely). */
const runsFor = (target: RouteTarget, withBody: number) => (takesBody(target) ? withBody : 3);

const bodyText = (target: RouteTarget, body: Body, ids: CaseIds) =>
  jsonText(body).replaceAll(JSON.stringify(ID), JSON.stringify(target.idOf(ids)));

interface Sending {
  ids: CaseIds;
  method?: string;
  path?: string;
  body?: Uint8Array;
  contentType?: string | null;
  headers?: [string, string][];
}

const sendTo = (target: RouteTarget, sending: Sending): Promise<RawResponse> => {
  const contentType = sending.contentType === undefined ? 'application/json' : sending.contentType;
  return send({
    method: sending.method ?? target.route.method,
    path: sending.path ?? target.path(sending.ids),
    headers: [
      ['x-api-key', world.apiKey],
      ...(contentType !== null && sending.body ? ([['content-type', contentType]] as [string, string][]) : []),
      ...(sending.headers ?? []),
    ],
    ...(sending.body ? { body: sending.body } : {}),
  });
};

/* ------------------------------------------------------------------------------------------------
 * What an accepted write stored must read back as what was sent: numbers exact, `__proto__` kept.
 */

const readTree = async (path: string) => {
  const res = await send({ method: 'GET', path, headers: [['x-api-key', world.apiKey]] });
  if (res.status !== 200) throw new AnswerRuleBroken(`reading back ${path}: ${res.status} ${res.text.slice(0, 200)}`);
  return parseJsonTree(res.text);
};

/** Before a merge patch: the request it applies to, read at the same (decoded) id. */
const previousOf = async (target: RouteTarget, path: string) => {
  if (target.stores !== 'request-patch') return undefined;
  const res = await send({
    method: 'GET',
    path: path.replace('/api/external/v1/Requests/', '/api/external/v1.1/Requests/'),
    headers: [['x-api-key', world.apiKey]],
  });
  return res.status === 200 ? parseJsonTree(res.text) : undefined;
};

const checkStored = async (target: RouteTarget, sent: string, res: RawResponse, previous?: JsonTree) => {
  if (!target.stores || res.status < 200 || res.status >= 300) return;
  let sentTree: JsonTree;
  try {
    sentTree = parseJsonTree(sent);
  } catch {
    return; // bytes that are not JSON text: nothing to compare with
  }
  const id = memberOf(parseJsonTree(res.text), 'externalId');
  if (id?.t !== 'string') throw new AnswerRuleBroken(`a ${res.status} write without the externalId it wrote`);
  const difference = (expected: JsonTree | undefined, stored: JsonTree | undefined) =>
    expected && stored ? differenceOf(expected, stored) : expected === stored ? undefined : ': stored nothing';
  let found: string | undefined;
  if (target.stores === 'portal-account') {
    const stored = await readTree(`${v11}/Portals/accounts/${encodeURIComponent(id.value)}`);
    for (const name of PORTAL_FIELDS) {
      const sentMember = memberOf(sentTree, name);
      const different = sentMember && difference(sentMember, memberOf(stored, name));
      if (different) found ??= `/${name}${different}`;
    }
  } else {
    const stored = withoutMembers(await readTree(`${v11}/Requests/${encodeURIComponent(id.value)}`), SERVICE_MEMBERS);
    if (target.stores === 'request-patch' && !previous) {
      throw new AnswerRuleBroken(`a merge patch accepted with ${res.status} where no request was found`);
    }
    const expected =
      target.stores === 'request-patch'
        ? mergePatch(withoutMembers(previous!, SERVICE_MEMBERS), sentTree)
        : sentTree.t === 'object'
          ? { t: 'object' as const, members: new Map([['externalId', id as JsonTree], ...sentTree.members]) }
          : sentTree;
    found = differenceOf(expected, stored, target.stores === 'request-patch' ? 'the merge patch gives' : 'sent');
  }
  if (found) throw new AnswerRuleBroken(`accepted with ${res.status}, but what was stored differs: ${found}`);
};

/** Sends a body case and applies every rule; the group names the count it adds to. */
const checkBodyCase = async (group: string, target: RouteTarget, bodyCase: BodyCase, rules: AnswerRules = {}) => {
  count(group);
  const ids = caseIds();
  const previous = await previousOf(target, target.path(ids));
  const text = bodyText(target, bodyCase.body, ids);
  const res = await sendTo(target, { ids, body: Buffer.from(text, 'utf8') });
  checkAnswer(res, {
    secrets: secretsOf(bodyCase.body),
    notEchoed: longStrings(bodyCase.body),
    ...rules,
  });
  if (
    target.route.handler === 'schemas/validate-payload' &&
    res.status === 200 &&
    !isValidationResult(JSON.parse(res.text))
  ) {
    throw new AnswerRuleBroken(`validate answered 200 without a Validation result: ${res.text.slice(0, 200)}`);
  }
  await checkStored(target, text, res, previous);
  return res;
};

/* ------------------------------------------------------------------------------------------------
 * The world: a tenant, the data cases may write to (play), and sentinel data nothing may change.
 */

const createRequest = async (apiKey: string, externalId: string) => {
  const res = await call('POST', `${v11}/Requests`, { apiKey, body: validRequest(externalId) });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

const createAttachment = async (apiKey: string, externalId: string) => {
  const res = await upload(apiKey, externalId, {
    fileName: 'note.txt',
    contentType: 'text/plain',
    bytes: Buffer.from(`Clinical note ${externalId}.\n`),
  });
  expect(res.status, res.text).toBe(201);
  return res.body.attachmentId as string;
};

const createAccount = async (apiKey: string, clientUserId: string, externalId: string) => {
  const res = await call('POST', `${v11}/Portals/accounts`, {
    apiKey,
    body: {
      externalId,
      clientUserId,
      portalId: 'sandbox',
      payerIds: ['SBX01'],
      username: 'sentinel@clinic.example',
      password: SECRET_PASSWORD,
      totpSecret: 'JBSWY3DPEHPK3PXP',
    },
  });
  expect(res.status, res.text).toBe(201);
  return externalId;
};

const sentinelSnapshot = async () => {
  const { request, attachment, account } = world.sentinel;
  const read = async (path: string) => {
    const res = await call('GET', path, { apiKey: world.apiKey });
    return { status: res.status, etag: res.headers.get('etag'), body: res.body };
  };
  const item = async (key: { pk: string; sk: string }) =>
    (await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
  return {
    request: await read(`${v11}/Requests/${request}`),
    attachments: await read(`${v11}/Requests/${request}/Attachments`),
    attachment: await read(`${v11}/Requests/${request}/Attachments/${attachment}`),
    bytes: (await download(world.apiKey, request, attachment)).bytes?.toString('base64'),
    account: await read(`${v11}/Portals/accounts/${account}`),
    items: [
      await item(requestEntity.key({ clientId, externalId: request })),
      await item(attachmentEntity.key({ clientId, externalId: request, attachmentId: attachment })),
      await item(portalAccountEntity.key({ clientId, externalId: account })),
    ],
  };
};

beforeAll(async () => {
  const tenant = await newTenant('hostile');
  clientId = tenant.clientId;
  const { apiKey, clientUserId } = tenant;
  const sentinelRequest = await createRequest(apiKey, uniqueId('sentinel'));
  const playRequest = await createRequest(apiKey, uniqueId('play'));
  world = {
    apiKey,
    clientUserId,
    sentinel: {
      request: sentinelRequest,
      attachment: await createAttachment(apiKey, sentinelRequest),
      account: await createAccount(apiKey, clientUserId, uniqueId('sentinel')),
    },
    play: {
      request: playRequest,
      attachment: await createAttachment(apiKey, playRequest),
      account: await createAccount(apiKey, clientUserId, uniqueId('play')),
    },
  };
  targets = apiRoutes.map((route) => targetOf(route, world));
  before = await sentinelSnapshot();
  expect(before.request.status).toBe(200);
  expect(before.attachment.status).toBe(200);
  expect(before.account.status).toBe(200);
  expect(before.items.every(Boolean)).toBe(true);
});

afterAll(() => {
  const total = [...cases.values()].reduce((sum, n) => sum + n, 0);
  const groups = [...cases].map(([group, n]) => `${group} ${n}`).join(', ');
  console.log(`hostile input: ${total} cases (seed ${SEED}): ${groups}`);
});

// Names for it.each: the table is known only once the world exists, so tests index into it.
const routeNames = apiRoutes.map((route, index) => ({
  index,
  name: `${route.method} ${route.path.replace(/^\/api\/external/, '')}`,
}));
const bodyRouteNames = routeNames.filter(({ index }) => ['POST', 'PUT', 'PATCH'].includes(apiRoutes[index]!.method));

/* ------------------------------------------------------------------------------------------------
 * Bodies.
 */

describe('mutated bodies: any member removed, replaced or added, with wrong types, odd strings, huge values', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    await assertProperty(mutatedBody(target.fixture ?? {}, target.freeForm), runsFor(target, 40), (bodyCase) =>
      checkBodyCase('mutated bodies', target, bodyCase).then(() => undefined),
    );
  });
});

describe('numbers beyond a double (1e400, 41-digit integers): refused, or stored exactly', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    await assertProperty(bodyWithNumber(target.fixture ?? {}, target.freeForm), runsFor(target, 20), (bodyCase) =>
      checkBodyCase('numbers', target, bodyCase).then(() => undefined),
    );
  });
});

describe('__proto__, constructor, prototype members at any depth: refused, or stored as sent', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    await assertProperty(bodyWithPrototypeKey(target.fixture ?? {}, target.freeForm), runsFor(target, 25), (bodyCase) =>
      checkBodyCase('prototype keys', target, bodyCase).then(() => undefined),
    );
  });
});

describe('nesting 33 to 10,000 levels deep: refused, or stored as sent', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    await assertProperty(deeplyNestedBody(target.fixture ?? {}, target.freeForm), runsFor(target, 8), (bodyCase) =>
      checkBodyCase('deep nesting', target, bodyCase).then(() => undefined),
    );
  });
});

describe(`thousands of schema errors in one body: answered within ${MANY_ERRORS_BUDGET_MS / 1000} s`, () => {
  // A server that formats errors in quadratic time is busy for minutes on the largest bodies: after
  // one route showed it, the others fail at once instead of queueing behind it.
  let slowRoute: string | undefined;
  it.each(bodyRouteNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index, name }) => {
    if (slowRoute) throw new Error(`not run: ${slowRoute} already answered too slowly`);
    const target = targets[index]!;
    const fixture = target.fixture ?? {};
    await assertProperty(
      bodyWithManyErrors(fixture),
      4,
      async (bodyCase) => {
        let res: RawResponse;
        try {
          res = await checkBodyCase('thousands of errors', target, bodyCase);
        } catch (error) {
          if (/no answer within/.test(String(error))) slowRoute = name;
          throw error;
        }
        if (res.elapsedMs > MANY_ERRORS_BUDGET_MS) {
          slowRoute = name;
          throw new AnswerRuleBroken(`answered ${res.status} after ${Math.round(res.elapsedMs)} ms`);
        }
      },
      mostErrors(fixture),
    );
  });
});

describe('raw bytes: invalid UTF-8, raw control characters, cut short, UTF-16', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    const fixture = target.fixture ?? {};
    await assertProperty(
      fc.array(bytesMutation, { minLength: 1, maxLength: 2 }),
      runsFor(target, 12),
      async (mutations) => {
        count('raw bytes');
        const ids = caseIds();
        const previous = await previousOf(target, target.path(ids));
        const text = bodyText(target, fixture, ids);
        const bytes = mutations.reduce((sent: Buffer, mutation) => mutation.apply(sent), Buffer.from(text) as Buffer);
        const res = await sendTo(target, { ids, body: bytes });
        checkAnswer(res, { secrets: secretsOf(fixture) });
        // Only bytes that are still UTF-8 JSON have an unambiguous value to compare with.
        const decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
        let sent: string | undefined;
        try {
          sent = decoded.decode(bytes);
        } catch {
          sent = undefined;
        }
        if (sent !== undefined) await checkStored(target, sent, res, previous);
      },
    );
  });
});

/* ------------------------------------------------------------------------------------------------
 * Path ids, headers, query names, oversized request heads.
 */

describe('path ids: encoded slashes, traversal, malformed and overlong percent-encoding, very long ids', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    // A route without variables gets the segment appended: it must then match nothing or something sound.
    const variables = target.variables.length ? target.variables : ['appended'];
    const segmentCase = fc
      .constantFrom(...variables)
      .chain((variable) =>
        hostileSegment(target.sentinelOf(variable)).map((segment) => new SegmentCase(variable, segment)),
      );
    await assertProperty(segmentCase, 20, async ({ variable, segment }) => {
      count('path ids');
      const ids = caseIds();
      const path =
        variable === 'appended' ? `${target.path(ids)}/${segment}` : target.path(ids, { [variable]: segment });
      // The body names no id: the path's, whatever it decodes to, is the one addressed.
      const body = target.fixture === undefined ? undefined : removeAt(['externalId']).apply(target.fixture);
      const sendsId = target.route.method === 'POST' && target.variables.length === 0;
      const text = body === undefined ? undefined : bodyText(target, sendsId ? target.fixture! : body, ids);
      const previous = await previousOf(target, path);
      const res = await sendTo(target, { ids, path, ...(text ? { body: Buffer.from(text) } : {}) });
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // malformed: compared as sent
      }
      checkAnswer(res, { notEchoed: decoded.length > 100 ? [decoded] : [], secrets: [SECRET_PASSWORD] });
      if (text) await checkStored(target, text, res, previous);
    });
  });
});

const headerValue = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((code) => code !== 0x7f)
    .map((code) => String.fromCharCode(code)),
  maxLength: 40,
});

/** Header and query names that mean nothing to the API: they must change nothing. */
const meaninglessName = fc.oneof(
  prototypeKey,
  fc.constantFrom('__PROTO__', 'Constructor', 'x-hostile', 'x-amzn-requestid', 'x-forwarded-for'),
);

class HeaderCase {
  constructor(
    readonly headers: [string, string][],
    readonly query: [string, string][],
    readonly meaningless: boolean,
  ) {}
  [fc.toStringMethod]() {
    const headers = this.headers.map(
      ([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 30)}… (${value.length} chars)` : value}`,
    );
    const query = this.query.map(([name, value]) => `${name}=${value.slice(0, 30)}`);
    return `headers [${headers.join(' | ')}] query [${query.join('&')}]`;
  }
}

const headerCase = (apiKey: string) => {
  const meaningless = fc.record({
    headers: fc.array(fc.tuple(meaninglessName, headerValue), { maxLength: 3 }),
    // Validly encoded only: a malformed escape (`%ZZ`) is refused for the whole URL (400, before routing).
    query: fc.array(fc.tuple(meaninglessName, fc.constantFrom('1', 'x', '', '%25ZZ', '__proto__', '{}')), {
      maxLength: 3,
    }),
  });
  const meaningful = fc.array(
    fc.oneof(
      fc.tuple(fc.constant('content-type'), fc.constantFrom('application/json', 'text/plain', 'application/xml', '')),
      fc.tuple(fc.constant('x-api-key'), fc.constantFrom('srk_invalid', '', '__proto__', apiKey)),
      fc.tuple(
        fc.constantFrom('if-match', 'if-none-match'),
        fc.constantFrom(
          '*',
          '"1"',
          'W/"1"',
          '"999999999999999999999999999999999999999999"',
          '',
          ',,,',
          '"',
          '__proto__',
        ),
      ),
      fc.tuple(
        fc.constantFrom('x-hostile', 'x-api-key', 'content-type', 'if-match', '__proto__', 'constructor'),
        fc.constantFrom(4_096, 8_000).map(longString),
      ),
      fc.tuple(
        fc.constantFrom('content-length', 'transfer-encoding', 'host', 'expect'),
        fc.constantFrom('', 'x', '-1', 'chunked, chunked', '100-continue'),
      ),
    ),
    { maxLength: 3 },
  );
  const pagingQuery = fc.array(
    fc.tuple(
      fc.constantFrom('pageSize', 'cursor', 'pageSize'),
      fc.constantFrom('0', '101', '-1', '1e400', 'x', '', longString(300), '%ZZ'),
    ),
    { maxLength: 2 },
  );
  return fc.oneof(
    meaningless.map(({ headers, query }) => new HeaderCase(headers, query, true)),
    fc
      .tuple(meaningless, meaningful, pagingQuery)
      .map(
        ([extra, headers, query]) => new HeaderCase([...extra.headers, ...headers], [...extra.query, ...query], false),
      ),
  );
};

const withQuery = (path: string, query: [string, string][]) =>
  query.length ? `${path}?${query.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join('&')}` : path;

describe('headers and query names: __proto__ and other prototype names, duplicates, huge values', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    await assertProperty(headerCase(world.apiKey), 10, async ({ headers, query, meaningless }) => {
      count('headers and query');
      const sendWith = async (extra: [string, string][], q: [string, string][]) => {
        const ids = caseIds();
        const text = target.fixture === undefined ? undefined : bodyText(target, target.fixture, ids);
        const contentTypeGiven = extra.some(([name]) => name.toLowerCase() === 'content-type');
        return sendTo(target, {
          ids,
          path: withQuery(target.path(ids), q),
          headers: extra,
          ...(contentTypeGiven ? { contentType: null } : {}),
          ...(text ? { body: Buffer.from(text) } : {}),
        });
      };
      const res = await sendWith(headers, query);
      const long = [...headers, ...query].map(([, value]) => value).filter((value) => value.length > 100);
      checkAnswer(res, { notEchoed: long, secrets: [SECRET_PASSWORD] });
      if (meaningless) {
        const plain = await sendWith([], []);
        // A conflict depends on state (an attachment limit reached in between), not on the names.
        if (plain.status !== res.status && plain.status !== 409 && res.status !== 409) {
          throw new AnswerRuleBroken(
            `names that mean nothing changed the answer: ${res.status}, without them ${plain.status}`,
          );
        }
      }
    });
  });
});

class OversizedHead {
  constructor(
    readonly what: string,
    readonly headers: [string, string][],
    readonly pathTail = '',
  ) {}
  [fc.toStringMethod]() {
    return this.what;
  }
}

describe('request heads over the gateway limit (16 KiB): a 4xx problem details', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    const oversized = fc.constantFrom(
      new OversizedHead('one 17 KiB header', [['x-hostile', longString(17 * 1024)]]),
      new OversizedHead('one 24 KiB header', [['x-hostile', longString(24 * 1024)]]),
      new OversizedHead(
        '300 headers of 64 bytes',
        Array.from({ length: 300 }, (_, i) => [`x-hostile-${i}`, 'v'.repeat(64)]),
      ),
      new OversizedHead('a 17 KiB query string', [], `?q=${longString(17 * 1024)}`),
    );
    await assertProperty(oversized, 2, async ({ headers, pathTail }) => {
      count('oversized heads');
      const ids = caseIds();
      const res = await sendTo(target, { ids, path: `${target.path(ids)}${pathTail}`, headers });
      const long = [...headers.map(([, value]) => value), pathTail].filter((value) => value.length > 100);
      checkAnswer(res, { notEchoed: long });
    });
  });
});

/* ------------------------------------------------------------------------------------------------
 * Methods and content types.
 */

const paths = [...new Set(apiRoutes.map((route) => route.path))];

describe('every method the table has not for a path: a 4xx, never served', () => {
  it.each(paths)('%s', { timeout: PROPERTY_TIMEOUT_MS }, async (path) => {
    const served = apiRoutes.filter((route) => route.path === path).map((route) => route.method as string);
    const target = targets[apiRoutes.findIndex((route) => route.path === path)]!;
    const failures: string[] = [];
    for (const method of HTTP_METHODS.filter((method) => !served.includes(method))) {
      count('wrong methods');
      const ids = caseIds();
      const withBody = method !== 'HEAD' && method !== 'TRACE';
      const res = await sendTo(target, {
        ids,
        method,
        ...(withBody ? { body: Buffer.from(bodyText(target, target.fixture ?? validRequest(ID), ids)) } : {}),
      });
      try {
        checkAnswer(res, { head: method === 'HEAD', secrets: [SECRET_PASSWORD] });
        if (res.status < 400) throw new AnswerRuleBroken(`served with ${res.status}`);
      } catch (error) {
        failures.push(`${method}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

const CONTENT_TYPES = [
  null,
  '',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/xml',
  'text/xml',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'application/x-www-form-urlencoded',
  'application/octet-stream',
  'application/jsonx',
  'application/json-patch+json',
  'application/problem+json',
  'application/merge-patch+json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json;;',
  '*/*',
  'application/*',
  'json',
  '__proto__',
  'application/__proto__',
];

const mediaTypeOf = (contentType: string | null) => contentType?.split(';')[0]?.trim().toLowerCase() ?? '';

describe('content types: wrong, missing, multipart without boundary → 415 (or 400 for broken multipart)', () => {
  it.each(routeNames)('$name', { timeout: PROPERTY_TIMEOUT_MS }, async ({ index }) => {
    const target = targets[index]!;
    const contentType = fc.oneof(
      { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 4 },
      {
        arbitrary: fc
          .tuple(
            fc.constantFrom('text', 'application', 'multipart', 'image', '*'),
            fc.stringMatching(/^[a-z0-9.+-]{1,16}$/),
          )
          .map(([type, subtype]) => `${type}/${subtype}`),
        weight: 1,
      },
    );
    await assertProperty(contentType, runsFor(target, 10), async (type) => {
      count('content types');
      const ids = caseIds();
      const text = bodyText(target, target.fixture ?? {}, ids);
      const previous = await previousOf(target, target.path(ids));
      const res = await sendTo(target, { ids, contentType: type, body: Buffer.from(text) });
      checkAnswer(res, { secrets: [SECRET_PASSWORD] });
      if (takesBody(target) && !target.mediaTypes.includes(mediaTypeOf(type))) {
        const body = res.status === 415 ? JSON.parse(res.text) : undefined;
        if (!Array.isArray(body?.accepted)) {
          throw new AnswerRuleBroken(
            `an unaccepted content type got ${res.status}, not 415 with "accepted": ${res.text.slice(0, 200)}`,
          );
        }
      }
      await checkStored(target, text, res, previous);
    });
  });
});

/* ------------------------------------------------------------------------------------------------
 * Last: the sentinel data, which no case addressed, is exactly as it was.
 */

describe('stored data', () => {
  it('the sentinel request, attachment and portal account are unchanged', async () => {
    expect(await sentinelSnapshot()).toEqual(before);
  });
});
