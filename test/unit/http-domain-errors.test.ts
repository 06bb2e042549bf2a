import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { changedConcurrently, VersionConflict } from '#lib/concurrency';
import {
  AlreadyExists,
  Conflict,
  type DomainError,
  Invalid,
  LimitReached,
  NotFound,
  Stale,
  TooLarge,
  UnsupportedContent,
} from '#lib/errors';
import type { ApiEvent } from '#lib/http/api-event';
import { asProblem, problemOf } from '#lib/http/domain-errors';
import { endpoint } from '#lib/http/endpoint';
import { HttpProblem } from '#lib/http/problem';

const context = { awsRequestId: 'req-1' } as Context;
const event = {
  httpMethod: 'GET',
  resource: '/api/external/v1.1/Requests/{externalId}',
  path: '/api/external/v1.1/Requests/A-1',
  headers: {},
  pathParameters: { externalId: 'A-1' },
  body: undefined,
  isBase64Encoded: false,
} as unknown as ApiEvent;

/** What a handler that throws `error` answers, through the real middleware stack. */
const answerTo = async (error: unknown) => {
  const response = await endpoint(async () => {
    throw error;
  })(event, context);
  return { status: response.statusCode, type: response.headers['Content-Type'], body: response.body };
};

describe('domain errors at the HTTP edge', () => {
  it('map each kind to its status', () => {
    const cases: Array<[DomainError, number]> = [
      [new Invalid('bad'), 400],
      [new NotFound('Request A-1'), 404],
      [new AlreadyExists('Request A-1'), 409],
      [new Conflict('busy'), 409],
      [new LimitReached('full'), 409],
      [new Stale('changed'), 412],
      [new TooLarge('big'), 413],
      [new UnsupportedContent('odd'), 415],
    ];
    for (const [error, status] of cases) expect([error.name, problemOf(error).status]).toEqual([error.name, status]);
  });

  it('answer problem details with the message as detail and the details as extension members, in order', async () => {
    expect(await answerTo(new NotFound('Request A-1'))).toEqual({
      status: 404,
      type: 'application/problem+json; charset=utf-8',
      body: JSON.stringify({
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        detail: 'Request A-1 was not found.',
        requestId: 'req-1',
      }),
    });
    const tooLarge = await answerTo(new TooLarge('The file exceeds 10 bytes.', { limitBytes: 10, reason: 'size' }));
    expect(tooLarge.body).toBe(
      JSON.stringify({
        type: 'about:blank',
        title: 'Payload Too Large',
        status: 413,
        detail: 'The file exceeds 10 bytes.',
        limitBytes: 10,
        reason: 'size',
        requestId: 'req-1',
      }),
    );
    expect(JSON.parse((await answerTo(new AlreadyExists('Portal account p-1'))).body)).toMatchObject({
      status: 409,
      title: 'Conflict',
      detail: 'Portal account p-1 already exists.',
    });
  });

  it('say when to retry a conflict that may pass later (Retry-After, whole seconds), and only that one', async () => {
    const contended = await endpoint(async () => {
      throw changedConcurrently('request', 2_400);
    })(event, context);
    expect(contended.statusCode).toBe(409);
    expect(contended.headers['Retry-After']).toBe('3');
    expect(JSON.parse(contended.body).detail).toBe('The request is being changed concurrently; retry.');
    expect(problemOf(new Conflict('busy', {}, 0.2)).headers).toEqual({ 'Retry-After': '1' });
    expect(problemOf(new Conflict('A pending delivery cannot be redelivered.')).headers).toEqual({});
    expect(problemOf(new AlreadyExists('Request A-1')).headers).toEqual({});
  });

  it('answer a write whose retries concurrent writers outlasted with a 409 and Retry-After, never a 500', async () => {
    const answer = await endpoint(async () => {
      throw new VersionConflict();
    })(event, context);
    expect(answer.statusCode).toBe(409);
    expect(answer.headers['Retry-After']).toBe('1');
    expect(JSON.parse(answer.body).detail).toBe('The resource is being changed concurrently; retry.');
  });

  it('leave HttpProblems as they are and hide everything else behind a 500', async () => {
    const problem = new HttpProblem(401, 'A valid x-api-key header is required.');
    expect(asProblem(problem)).toBe(problem);
    expect(asProblem(new TypeError('x is undefined'))).toBeUndefined();
    const answer = await answerTo(new TypeError('x is undefined'));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body).detail).toBe('An unexpected error occurred. It has been logged.');
  });
});
