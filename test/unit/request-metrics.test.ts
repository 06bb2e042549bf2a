import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { endpoint } from '#lib/http/endpoint';
import { json } from '#lib/http/response';
import { METRIC, METRICS_NAMESPACE } from '#lib/observability/names';
import { routes } from '#lib/routes/route-table';

/*
 * The EMF line of an API call (lib/observability/metrics.ts recordRequest): written once the caller has its
 * answer, in the turn after it (lib/observability/after-answer.ts), with the call's route, outcome and latency.
 */

const saved = process.env.POWERTOOLS_METRICS_DISABLED;
// Decided once per process, on first use: on before any call here.
beforeAll(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});
afterAll(() => {
  if (saved === undefined) delete process.env.POWERTOOLS_METRICS_DISABLED;
  else process.env.POWERTOOLS_METRICS_DISABLED = saved;
});
afterEach(() => vi.restoreAllMocks());

const route = routes.find((candidate) => candidate.handler === 'requests/get-request')!;
const event = {
  httpMethod: route.method,
  resource: route.path,
  path: route.path,
  headers: {},
  pathParameters: { externalId: 'REQ-1' },
  queryStringParameters: null,
  body: null,
  isBase64Encoded: false,
  requestContext: { requestId: 'gw-1', identity: { sourceIp: '192.0.2.1' }, authorizer: { clientId: 'client-1' } },
} as unknown as APIGatewayProxyEvent;
const context = { functionName: 'GetRequest', awsRequestId: 'fn-1', getRemainingTimeInMillis: () => 29_000 } as Context;

describe('the EMF line of an API call', () => {
  it('is written after the answer, in the next turn of the event loop, one per call', async () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const emfLines = () =>
      stdout.mock.calls.map(([chunk]) => JSON.parse(String(chunk)) as Record<string, any>).filter((line) => line._aws);
    const handler = endpoint(async () => json(404, { title: 'Not Found' }));

    expect((await handler(event as never, context)).statusCode).toBe(404);
    expect(emfLines()).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));

    expect(emfLines()).toHaveLength(1);
    const [line] = emfLines();
    expect(line).toMatchObject({
      service: 'service-review',
      route: 'GetRequest',
      [METRIC.requests]: 1,
      [METRIC.clientErrors]: 1,
      [METRIC.serverErrors]: 0,
      [METRIC.latency]: expect.any(Number),
    });
    expect(line!._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [['service', 'route']],
    });
  });
});
