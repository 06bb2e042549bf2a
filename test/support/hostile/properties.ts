import fc from 'fast-check';
import { expect } from 'vitest';
import { validRequest } from '#test/support/fixtures';
import {
  bodyWithManyErrors,
  bodyWithNumber,
  bodyWithPrototypeKey,
  deeplyNestedBody,
  mostErrors,
  mutatedBody,
} from './body-cases.ts';
import {
  assertProperty,
  bodyText,
  checkBodyCase,
  checkStored,
  count,
  previousOf,
  runsFor,
  sendTo,
  takesBody,
} from './checks.ts';
import { type BodyCase, ID, removeAt, secretsOf } from './json-body.ts';
import { type Family, type FamilyRow, MANY_ERRORS_BUDGET_MS, SECRET_PASSWORD } from './table.ts';
import { apiRoutes, type RouteTarget } from './targets.ts';
import { AnswerRuleBroken, checkAnswer, type RawResponse } from './wire.ts';
import {
  bytesMutation,
  contentType,
  HTTP_METHODS,
  headerCase,
  hostileSegment,
  mediaTypeOf,
  oversizedHead,
  SegmentCase,
  withQuery,
} from './wire-cases.ts';
import { caseIds } from './world.ts';

/**
 * Each family of the table (table.ts) as what one route's test does: generate the family's cases for the
 * route, send each, check the answer against the family's expectation.
 */

type Property = (target: RouteTarget, row: FamilyRow) => Promise<void>;

/** A family whose cases are bodies: each is sent as JSON text and checked by checkBodyCase. */
const bodyFamily =
  (
    cases: (fixture: NonNullable<RouteTarget['fixture']>, freeForm: RouteTarget['freeForm']) => fc.Arbitrary<BodyCase>,
  ): Property =>
  async (target, row) => {
    await assertProperty(cases(target.fixture ?? {}, target.freeForm), runsFor(target, row), (bodyCase) =>
      checkBodyCase(row.family, target, bodyCase).then(() => undefined),
    );
  };

/*
 * A server that formats errors in quadratic time is busy for minutes on the largest bodies: after one route
 * showed it, the others fail at once instead of queueing behind it.
 */
let slowRoute: string | undefined;

const thousandsOfErrors: Property = async (target, row) => {
  const name = `${target.route.method} ${target.route.path.replace(/^\/api\/external/, '')}`;
  if (slowRoute) throw new Error(`not run: ${slowRoute} already answered too slowly`);
  const fixture = target.fixture ?? {};
  await assertProperty(
    bodyWithManyErrors(fixture),
    runsFor(target, row),
    async (bodyCase) => {
      let res: RawResponse;
      try {
        res = await checkBodyCase(row.family, target, bodyCase);
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
};

const rawBytes: Property = async (target, row) => {
  const fixture = target.fixture ?? {};
  await assertProperty(
    fc.array(bytesMutation, { minLength: 1, maxLength: 2 }),
    runsFor(target, row),
    async (mutations) => {
      count(row.family);
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
};

const pathIds: Property = async (target, row) => {
  // A route without variables gets the segment appended: it must then match nothing or something sound.
  const variables = target.variables.length ? target.variables : ['appended'];
  const segmentCase = fc
    .constantFrom(...variables)
    .chain((variable) =>
      hostileSegment(target.sentinelOf(variable)).map((segment) => new SegmentCase(variable, segment)),
    );
  await assertProperty(segmentCase, runsFor(target, row), async ({ variable, segment }) => {
    count(row.family);
    const ids = caseIds();
    const path = variable === 'appended' ? `${target.path(ids)}/${segment}` : target.path(ids, { [variable]: segment });
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
};

const headersAndQuery: Property = async (target, row) => {
  const sendWith = async (extra: [string, string][], query: [string, string][]) => {
    const ids = caseIds();
    const text = target.fixture === undefined ? undefined : bodyText(target, target.fixture, ids);
    const contentTypeGiven = extra.some(([name]) => name.toLowerCase() === 'content-type');
    return sendTo(target, {
      ids,
      path: withQuery(target.path(ids), query),
      headers: extra,
      ...(contentTypeGiven ? { contentType: null } : {}),
      ...(text ? { body: Buffer.from(text) } : {}),
    });
  };
  await assertProperty(headerCase(target.apiKey), runsFor(target, row), async ({ headers, query, meaningless }) => {
    count(row.family);
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
};

const oversizedHeads: Property = async (target, row) => {
  await assertProperty(oversizedHead, runsFor(target, row), async ({ headers, pathTail }) => {
    count(row.family);
    const ids = caseIds();
    const res = await sendTo(target, { ids, path: `${target.path(ids)}${pathTail}`, headers });
    const long = [...headers.map(([, value]) => value), pathTail].filter((value) => value.length > 100);
    checkAnswer(res, { notEchoed: long });
  });
};

/** Not generated: every method the routes of the target's path lack, once each. */
const wrongMethods: Property = async (target, row) => {
  const served = apiRoutes.filter((route) => route.path === target.route.path).map((route) => route.method as string);
  const failures: string[] = [];
  for (const method of HTTP_METHODS.filter((method) => !served.includes(method))) {
    count(row.family);
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
};

const contentTypes: Property = async (target, row) => {
  await assertProperty(contentType, runsFor(target, row), async (type) => {
    count(row.family);
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
};

export const familyProperties: Record<Family, Property> = {
  'mutated bodies': bodyFamily(mutatedBody),
  numbers: bodyFamily(bodyWithNumber),
  'prototype keys': bodyFamily(bodyWithPrototypeKey),
  'deep nesting': bodyFamily(deeplyNestedBody),
  'thousands of errors': thousandsOfErrors,
  'raw bytes': rawBytes,
  'path ids': pathIds,
  'headers and query': headersAndQuery,
  'oversized heads': oversizedHeads,
  'wrong methods': wrongMethods,
  'content types': contentTypes,
};
