import fc from 'fast-check';
import { type Body, type BodyCase, ID, jsonText, longStrings, secretsOf } from './json-body.ts';
import { differenceOf, type JsonTree, memberOf, mergePatch, parseJsonTree, withoutMembers } from './json-tree.ts';
import type { FamilyRow } from './table.ts';
import type { RouteTarget } from './targets.ts';
import { AnswerRuleBroken, type AnswerRules, checkAnswer, isValidationResult, type RawResponse, send } from './wire.ts';
import { type CaseIds, caseIds } from './world.ts';

/**
 * How the hostile-input suite sends a case and checks its answer: a property over generated cases with the
 * suite's seed, the request to a route, the rules every answer follows (wire.ts) and, for an accepted write,
 * the read-back that what was stored is what was sent. Counts the cases by family for the closing line.
 *
 * HOSTILE_SEED picks another fixed seed (a failure prints the seed and path that reproduce it);
 * HOSTILE_RUNS multiplies the number of cases (e.g. 10 for a long local run).
 */
export const SEED = Number(process.env.HOSTILE_SEED ?? 20_261_122);
const RUNS = Number(process.env.HOSTILE_RUNS ?? 1);
export const PROPERTY_TIMEOUT_MS = 150_000;

const v11 = '/api/external/v1.1';
const SERVICE_MEMBERS = ['authorization', 'createdAt', 'updatedAt', 'version'];
const PORTAL_FIELDS = ['clientUserId', 'portalId', 'payerIds', 'displayName', 'username', 'status'];
const CONNECTION_FIELDS = ['clientUserId', 'payerId', 'clientId', 'status'];

/** Cases sent, by family. */
export const casesSent = new Map<string, number>();
export const count = (group: string) => casesSent.set(group, (casesSent.get(group) ?? 0) + 1);

export const assertProperty = <T>(
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

export const takesBody = (target: RouteTarget) => target.mediaTypes.length > 0;
/** The family's generated cases for the route (table.ts `runs`). */
export const runsFor = (target: RouteTarget, { runs = 1 }: FamilyRow) =>
  typeof runs === 'number' ? runs : takesBody(target) ? runs.withBody : runs.withoutBody;

export const bodyText = (target: RouteTarget, body: Body, ids: CaseIds) =>
  jsonText(body).replaceAll(JSON.stringify(ID), JSON.stringify(target.idOf(ids)));

interface Sending {
  ids: CaseIds;
  method?: string;
  path?: string;
  body?: Uint8Array;
  contentType?: string | null;
  headers?: [string, string][];
}

export const sendTo = (target: RouteTarget, sending: Sending): Promise<RawResponse> => {
  const contentType = sending.contentType === undefined ? 'application/json' : sending.contentType;
  return send({
    method: sending.method ?? target.route.method,
    path: sending.path ?? target.path(sending.ids),
    headers: [
      ['x-api-key', target.apiKey],
      ...(contentType !== null && sending.body ? ([['content-type', contentType]] as [string, string][]) : []),
      ...(sending.headers ?? []),
    ],
    ...(sending.body ? { body: sending.body } : {}),
  });
};

/* ------------------------------------------------------------------------------------------------
 * What an accepted write stored must read back as what was sent: numbers exact, `__proto__` kept.
 */

const readTree = async (target: RouteTarget, path: string) => {
  const res = await send({ method: 'GET', path, headers: [['x-api-key', target.apiKey]] });
  if (res.status !== 200) throw new AnswerRuleBroken(`reading back ${path}: ${res.status} ${res.text.slice(0, 200)}`);
  return parseJsonTree(res.text);
};

/** Before a merge patch: the request it applies to, read at the same (decoded) id. */
export const previousOf = async (target: RouteTarget, path: string) => {
  if (target.stores !== 'request-patch') return undefined;
  const res = await send({
    method: 'GET',
    path: path.replace('/api/external/v1/Requests/', '/api/external/v1.1/Requests/'),
    headers: [['x-api-key', target.apiKey]],
  });
  return res.status === 200 ? parseJsonTree(res.text) : undefined;
};

export const checkStored = async (target: RouteTarget, sent: string, res: RawResponse, previous?: JsonTree) => {
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
  if (target.stores === 'portal-account' || target.stores === 'payer-connection') {
    const [resource, fields] =
      target.stores === 'portal-account'
        ? ['Portals/accounts', PORTAL_FIELDS]
        : ['Payers/connections', CONNECTION_FIELDS];
    const stored = await readTree(target, `${v11}/${resource}/${encodeURIComponent(id.value)}`);
    for (const name of fields) {
      const sentMember = memberOf(sentTree, name);
      const different = sentMember && difference(sentMember, memberOf(stored, name));
      if (different) found ??= `/${name}${different}`;
    }
  } else {
    const stored = withoutMembers(
      await readTree(target, `${v11}/Requests/${encodeURIComponent(id.value)}`),
      SERVICE_MEMBERS,
    );
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
export const checkBodyCase = async (
  group: string,
  target: RouteTarget,
  bodyCase: BodyCase,
  rules: AnswerRules = {},
) => {
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
