/**
 * `npm run bench:durations`: what the main routes' functions do per call, the inputs of the cost
 * table of docs/deploy.md. Each handler runs in-process against the local stack (seeded as `npm
 * start` seeds it) with its sample event (events/, scripts/sample-events.ts): its duration (p50,
 * p95) as a ratio to a floor measured in the same run (one GetItem on the same emulator, the least
 * any of them does), its DynamoDB calls and request bytes (counted on the SDK client), and the
 * bytes it logs (log, EMF and audit lines, all stdout, so CloudWatch Logs ingestion on AWS; the audit
 * lines counted apart). The handlers run with the deployed variables (bench/lambda-environment.ts).
 * Results: bench/results/handler-durations.json.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { AUDIT_MARKER } from '#lib/audit/audit-record';
import { ownInvocation } from '#local/invocations';
import { startLocalStack } from '#local/stack';
import { runAsDeployedInProcess, startXrayDaemon } from './lambda-environment.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200);
const WARMUP = 20;

const stack = await startLocalStack({ port: 0 });
process.env.LOG_LEVEL = 'info';
const { seedDemo } = await import('#local/seed');
const seedDir = mkdtempSync(join(tmpdir(), 'bench-durations-'));
await seedDemo(seedDir);
const { sampleEvents } = await import('#scripts/sample-events');
const { dynamoClient } = await import('#lib/aws/dynamodb');
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');

/**
 * Whether the code running is a measured call: what the local stack does meanwhile on the same client and
 * stdout (the event relay's polling, its log lines) is not the call's.
 */
const inCall = new AsyncLocalStorage<true>();
/** DynamoDB calls of the current measurement: operation → count and request bytes. */
let calls: Record<string, { count: number; requestBytes: number }> = {};
dynamoClient.middlewareStack.add(
  (next) => async (args) => {
    if (!inCall.getStore()) return next(args);
    const request = args.request as { headers?: Record<string, string>; body?: string };
    const operation = request.headers?.['x-amz-target']?.split('.')[1] ?? 'unknown';
    calls[operation] ??= { count: 0, requestBytes: 0 };
    const entry = calls[operation];
    entry.count += 1;
    entry.requestBytes += Buffer.byteLength(request.body ?? '');
    return next(args);
  },
  { step: 'build', name: 'benchCallCounter' },
);

/**
 * Bytes the handlers write to stdout (their log, EMF and audit lines; CloudWatch Logs on AWS), audit lines
 * apart. The handlers run as deployed (bench/lambda-environment.ts: metrics, tracing to a local daemon, the
 * audit lines on stdout only), stdout to /dev/null.
 */
let loggedBytes = 0;
let auditedBytes = 0;
let measuring = false;
const auditMarker = `"${AUDIT_MARKER.field}":"${AUDIT_MARKER.value}"`;
const daemon = await startXrayDaemon();
const lambda = runAsDeployedInProcess('bench', daemon.address, (chunk) => {
  if (!measuring || !inCall.getStore()) return;
  const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
  if (typeof chunk === 'string' && chunk.includes(auditMarker)) auditedBytes += bytes;
  else loggedBytes += bytes;
});

const context = (functionName: string) =>
  ({ functionName, awsRequestId: 'bench', getRemainingTimeInMillis: () => 29_000 }) as Context;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const measure = async (name: string, call: (i: number) => Promise<unknown>) => {
  for (let i = 0; i < WARMUP; i++) await call(-1 - i);
  const samples: number[] = [];
  calls = {};
  loggedBytes = 0;
  auditedBytes = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    measuring = true;
    lambda.nextInvocation();
    const start = performance.now();
    let ms = 0;
    try {
      await inCall.run(true, async () => {
        await call(i);
        ms = performance.now() - start;
        // What the call leaves for after its answer (its EMF line: lib/observability/after-answer.ts) is logged
        // by it too: the turn after the answer is over before the count stops.
        await new Promise((resolve) => setImmediate(resolve));
      });
    } finally {
      measuring = false;
    }
    samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  const perCall = Object.fromEntries(
    Object.entries(calls).map(([operation, { count, requestBytes }]) => [
      operation,
      { calls: count / ITERATIONS, requestBytes: Math.round(requestBytes / count) },
    ]),
  );
  return {
    name,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    dynamodb: perCall,
    logBytesPerCall: Math.round(loggedBytes / ITERATIONS),
    auditBytesPerCall: Math.round(auditedBytes / ITERATIONS),
  };
};

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
const events = sampleEvents();
const sample = (file: string) => {
  const found = events.find((event) => event.file === file);
  if (!found) throw new Error(`No sample event ${file}`);
  // A copy per call: the middleware replaces the event's body with what it parsed.
  return structuredClone(found.event) as APIGatewayProxyEvent;
};
/** Each call an invocation of its own, as the stack runs its functions (local/invocations.ts). */
const handlerOf = async (module: string) =>
  ownInvocation(
    (await import(/* @vite-ignore */ new URL(`../functions/${module}.ts`, import.meta.url).href))
      .handler as ProxyHandler,
  );

/** Runs `module` with `event`, failing the run on anything but `status`. */
const route = async (module: string, status: number, eventOf: (i: number) => APIGatewayProxyEvent) => {
  const handler = await handlerOf(module);
  return async (i: number) => {
    const response = await handler(eventOf(i), context(module));
    if (response.statusCode !== status) throw new Error(`${module}: ${response.statusCode} ${response.body}`);
  };
};

const run = Date.now().toString(36);
const withBody = (event: APIGatewayProxyEvent, body: Record<string, unknown>) => ({
  ...event,
  body: JSON.stringify(body),
});
const createRequest = sample('create-request.json');
const requestBody = JSON.parse(createRequest.body!) as Record<string, unknown>;
const createAttachment = sample('create-attachment.json');
const attachmentBody = JSON.parse(createAttachment.body!) as Record<string, unknown>;

const measureFloor = () =>
  measure('floor: one GetItem on the same emulator', () => dynamoTenantStore.getClient('demo-client'));
const floorBefore = await measureFloor();
const results = [
  await measure(
    'POST v1.1/Requests (CreateRequestFunction)',
    await route('requests/create-request', 201, (i) =>
      withBody(createRequest, { ...requestBody, externalId: `bench-${run}-${i}` }),
    ),
  ),
  await measure(
    'GET v1.1/Requests/{id} (GetRequestFunction)',
    await route('requests/get-request', 200, () => sample('get-request.json')),
  ),
  // Spread over the requests created above: a request holds a bounded number of attachments.
  await measure(
    'POST v1.1/Requests/{id}/Attachments, presigned (CreateAttachmentFunction)',
    await route('attachments/create-attachment', 201, (i) => {
      const externalId = `bench-${run}-${Math.max(0, i) % ITERATIONS}`;
      return {
        ...withBody(createAttachment, { ...attachmentBody, fileName: `bench-${i}.pdf` }),
        path: `/api/external/v1.1/Requests/${externalId}/Attachments`,
        pathParameters: { externalId },
      };
    }),
  ),
  await measure(
    'POST v1.1/Portals/accounts/filter (FilterPortalAccountsFunction)',
    await route('portal-accounts/filter-portal-accounts', 200, () => sample('filter-portal-accounts.json')),
  ),
];
// Measured before and after the routes, the lower kept: the first run also pays the process warming up.
const floorAfter = await measureFloor();
const floor = floorAfter.p50 < floorBefore.p50 ? floorAfter : floorBefore;
const withRatios = results.map((result) => ({ ...result, ratioP50: result.p50 / floor.p50 }));

const output = {
  when: new Date().toISOString(),
  iterations: ITERATIONS,
  node: process.version,
  floor,
  results: withRatios,
};
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/handler-durations.json', `${JSON.stringify(output, null, 2)}\n`);
lambda.print(
  [
    `floor (GetItem): p50 ${floor.p50.toFixed(2)} ms`,
    ...withRatios.map(
      (r) =>
        `${r.name}: p50 ${r.p50.toFixed(2)} ms (${r.ratioP50.toFixed(1)}× floor), p95 ${r.p95.toFixed(2)} ms; ` +
        `DynamoDB ${JSON.stringify(r.dynamodb)}; logs ${r.logBytesPerCall} B, audit ${r.auditBytesPerCall} B per call`,
    ),
    'bench/results/handler-durations.json',
    '',
  ].join('\n'),
);
await stack.close();
await daemon.close();
rmSync(seedDir, { recursive: true, force: true });
