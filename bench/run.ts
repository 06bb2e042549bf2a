/**
 * `npm run bench`: what a request costs, as ratios to floors measured in the same run.
 * - Latency through the local stack (gateway → authorizer → Middy → ajv → DynamoDB emulator), one
 *   request at a time, against an empty HTTP server on the same loopback.
 * - In process: each handler against a bare handler making the same DynamoDB calls to the same emulator
 *   (median per call after warmup, with the spread of the ratio over blocks of 100 interleaved calls; the calls
 *   are counted and must match), and the CPU of each call, what it leaves for after its answer included.
 * - Throughput: CONNECTIONS concurrent connections through the local gateway against a node:http floor
 *   server making the same storage calls through the same client; req/s and ratio. Any error (a status
 *   ≥ 400, a failed connection) fails the run.
 * - Validation throughput against JSON.parse of the same body (the 250 KB error-laden bodies are
 *   bench/validation.ts, which `npm run bench` runs next).
 * BENCH_ONLY=in-process runs the in-process pairs alone (below).
 * Every handler runs with the deployed function's variables (bench/lambda-environment.ts: metrics on,
 * tracing to a local UDP daemon, a fresh sampled trace header per in-process call, the audit lines on
 * stdout only, stdout to /dev/null). The bare handlers use a client of their own, without the tracing
 * middleware, as a bare function would.
 * Results: bench/results/bench.json. Bounded: fixed iteration counts, loopback only.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '#local/stack';
import { runAsDeployedInProcess, startXrayDaemon } from './lambda-environment.ts';
import { createRequestEvent, getRequestEvent, type proxyEvent } from './proxy-event.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = 30;
const IN_PROCESS_CALLS = Number(process.env.BENCH_IN_PROCESS_CALLS ?? 500);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const THROUGHPUT_REQUESTS = Number(process.env.BENCH_THROUGHPUT_REQUESTS ?? 2000);

// The throughput runs go faster than the local default throttle would let one client: lift it, the
// bucket arithmetic stays on the path. The authorizer cache keeps its deployed TTL (the default).
const stack = await startLocalStack({
  port: 0,
  defaultLimits: { rateLimit: 1_000_000, burstLimit: 1_000_000, quotaPerDay: 100_000_000 },
});
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { provisioning } = await import('#lib/tenancy/provisioning');
const { validate } = await import('#lib/validation/validate');
const { validRequest } = await import('#test/support/fixtures');
const { clientId, apiKey } = await provisioning(dynamoTenantStore).createClient('bench');
const daemon = await startXrayDaemon();
const lambda = runAsDeployedInProcess('bench', daemon.address);
lambda.nextInvocation();

const floorServer = createServer((_req, res) => res.end('{}'));
await new Promise<void>((resolve) => floorServer.listen(0, '127.0.0.1', resolve));
const floorUrl = `http://127.0.0.1:${(floorServer.address() as AddressInfo).port}/`;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const measure = async (name: string, send: (i: number) => Promise<Response>) => {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const start = performance.now();
    const res = await send(i);
    await res.arrayBuffer();
    if (res.status >= 400) throw new Error(`${name}: HTTP ${res.status}`);
    if (i >= WARMUP) samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { name, p50: percentile(samples, 50), p95: percentile(samples, 95), p99: percentile(samples, 99) };
};

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

const run = Date.now().toString(36);
/**
 * BENCH_ONLY=in-process: the in-process pairs alone, for a quicker measurement of the warm path; the requests
 * they read are created through the gateway first, as the latency part does.
 */
const inProcessOnly = process.env.BENCH_ONLY === 'in-process';
const createRequests = async () => {
  for (let i = 0; i < ITERATIONS; i++) {
    const res = await api('POST', '/api/external/v1.1/Requests', validRequest(`b-${run}-${i}`));
    if (res.status !== 201) throw new Error(`seeding: HTTP ${res.status}`);
  }
  return [];
};
const floor = await measure('floor: empty HTTP server', () => fetch(floorUrl));
const results = inProcessOnly
  ? await createRequests()
  : [
      await measure('GET Schemas (gateway + authorizer)', () => api('GET', '/api/external/v1.1/Schemas')),
      await measure('POST v1.1 Requests (create)', (i) =>
        api('POST', '/api/external/v1.1/Requests', validRequest(`b-${run}-${i}`)),
      ),
      await measure('GET v1.1 Requests/{id}', (i) =>
        api('GET', `/api/external/v1.1/Requests/b-${run}-${i % ITERATIONS}`),
      ),
      await measure('PUT v1 Requests/{id} (upsert, replace)', (i) =>
        api('PUT', `/api/external/v1/Requests/b-${run}-${i % ITERATIONS}`, validRequest(`b-${run}-${i % ITERATIONS}`)),
      ),
      await measure('POST Schemas/Request/validate', () =>
        api('POST', '/api/external/v1.1/Schemas/Request/validate', validRequest('v')),
      ),
    ];

// In-process: compiled validator vs parsing the same JSON.
const text = JSON.stringify(validRequest('throughput'));
const opsPerSecond = (fn: () => unknown) => {
  const rounds = 20_000;
  for (let i = 0; i < 1000; i++) fn();
  const start = performance.now();
  for (let i = 0; i < rounds; i++) fn();
  return rounds / ((performance.now() - start) / 1000);
};
const parseOps = opsPerSecond(() => JSON.parse(text));
const parsed = JSON.parse(text);
const validateOps = opsPerSecond(() => validate('Request', parsed));

// In process: each handler against a bare handler making the same DynamoDB calls through the same client.
const { dynamoClient } = await import('#lib/aws/dynamodb');
const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
const { DynamoDBDocumentClient, GetCommand, PutCommand } = await import('@aws-sdk/lib-dynamodb');
/** The bare handlers' own client: the same options, no tracing middleware. */
const bareClient = new DynamoDBClient({});
const dynamo = DynamoDBDocumentClient.from(bareClient, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});
const { requestEntity } = await import('#lib/entities/request');
const { TABLE_KEY } = await import('#lib/table');
const { tableName } = await import('#lib/config/resources');
const { lambdaContext } = await import('#local/gateway/invoke');
// Called directly, one invocation at a time, as a standard Lambda instance runs them: not through the local
// stack's per-invocation contexts (local/invocations.ts, Lambda Managed Instances' AWS_LAMBDA_MAX_CONCURRENCY),
// which make Powertools and the logger take their per-invocation store paths; the variable is unset meanwhile.
const getRequest = (await import('#functions/requests/get-request')).handler;
const createRequest = (await import('#functions/requests/create-request')).handler;

const errors: string[] = [];
/**
 * The DynamoDB commands of one call (the document client shares the low-level client's stack): only those
 * sent from inside it, not the local stack's own polling (the event relay) on the same client.
 */
const counted = new AsyncLocalStorage<string[]>();
for (const client of [dynamoClient, bareClient]) {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      counted.getStore()?.push(context.commandName ?? 'unknown');
      return next(args);
    },
    { step: 'initialize', name: 'benchCallCounter' },
  );
}

type BareEvent = { pathParameters: { externalId?: string } | null; body: string | null };
type BareResult = { statusCode: number; headers: Record<string, string>; body: string };
const jsonHeaders = { 'Content-Type': 'application/json; charset=utf-8' };
/** GET a request: the one consistent read the store makes, the item as the body. */
const bareGet = async ({ pathParameters }: BareEvent): Promise<BareResult> => {
  const { Item } = await dynamo.send(
    new GetCommand({
      TableName: tableName(),
      Key: requestEntity.key({ clientId, externalId: pathParameters!.externalId! }),
      ConsistentRead: true,
    }),
  );
  return { statusCode: Item ? 200 : 404, headers: jsonHeaders, body: JSON.stringify(Item ?? {}) };
};
/** POST a request: one put conditional on its absence (its failure is the 409), the body echoed. */
const bareCreate = async ({ body }: BareEvent): Promise<BareResult> => {
  const document = JSON.parse(body!) as { externalId: string };
  const Key = requestEntity.key({ clientId, externalId: document.externalId });
  const now = new Date().toISOString();
  await dynamo.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...Key, document: body, createdAt: now, updatedAt: now, version: 1 },
      ConditionExpression: `attribute_not_exists(${TABLE_KEY.partition})`,
    }),
  );
  return { statusCode: 201, headers: jsonHeaders, body: JSON.stringify({ ...document, createdAt: now }) };
};

const caller = { clientId, keyId: 'bench', apiKey };

type Invoke = (event: never, context: never) => Promise<unknown>;
/** Interleaved calls per block, for the spread of the in-process ratio. */
const BLOCK = 100;
const median = (list: number[]) =>
  percentile(
    [...list].sort((a, b) => a - b),
    50,
  );
const inProcessPair = async (
  name: string,
  expected: number,
  handler: Invoke,
  bare: (event: BareEvent) => Promise<BareResult>,
  eventOf: (i: number, who: 'handler' | 'bare') => ReturnType<typeof proxyEvent>,
) => {
  const call = async (who: 'handler' | 'bare', i: number) => {
    const event = eventOf(i, who);
    lambda.nextInvocation();
    const cpuBefore = process.cpuUsage();
    const start = performance.now();
    const result = (
      who === 'handler' ? await handler(event as never, lambdaContext('bench') as never) : await bare(event)
    ) as { statusCode: number };
    const ms = performance.now() - start;
    // The CPU of the call and of what it left for after its answer (the tracer's sends, xray.ts), the
    // emulator's share included, alike for both: the turn after the answer is over before this reads it.
    await new Promise((resolve) => setImmediate(resolve));
    const cpuMs = (({ user, system }) => (user + system) / 1000)(process.cpuUsage(cpuBefore));
    if (result.statusCode !== expected) errors.push(`${name} (${who}): ${result.statusCode}, expected ${expected}`);
    return { ms, cpuMs };
  };
  const callsOf = async (who: 'handler' | 'bare') => {
    const calls: string[] = [];
    await counted.run(calls, () => call(who, -1));
    return calls;
  };
  const handlerCalls = await callsOf('handler');
  const bareCalls = await callsOf('bare');
  if (handlerCalls.join() !== bareCalls.join()) {
    errors.push(`${name}: the bare handler makes ${bareCalls.join(', ')}, the handler ${handlerCalls.join(', ')}`);
  }
  const samples = { handler: [] as number[], bare: [] as number[] };
  const cpu = { handler: [] as number[], bare: [] as number[] };
  for (let i = 0; i < WARMUP + IN_PROCESS_CALLS; i++) {
    // Interleaved, alternating which goes first.
    const order = i % 2 ? (['handler', 'bare'] as const) : (['bare', 'handler'] as const);
    for (const who of order) {
      const { ms, cpuMs } = await call(who, i);
      if (i >= WARMUP) {
        samples[who].push(ms);
        cpu[who].push(cpuMs);
      }
    }
  }
  // The spread: the ratio of the medians in each block of BLOCK interleaved calls, as they ran.
  const blockRatios = Array.from({ length: Math.floor(IN_PROCESS_CALLS / BLOCK) }, (_, block) => {
    const [h, b] = [samples.handler, samples.bare].map((list) =>
      median(list.slice(block * BLOCK, (block + 1) * BLOCK)),
    );
    return h! / b!;
  }).sort((a, b) => a - b);
  const handlerMs = median(samples.handler);
  const bareMs = median(samples.bare);
  return {
    name,
    storageCalls: handlerCalls,
    handlerMedianMs: handlerMs,
    bareMedianMs: bareMs,
    ratio: handlerMs / bareMs,
    blockRatios: { blocks: blockRatios.length, min: blockRatios[0], max: blockRatios.at(-1) },
    handlerCpuMedianMs: median(cpu.handler),
    bareCpuMedianMs: median(cpu.bare),
    cpuRatio: median(cpu.handler) / median(cpu.bare),
  };
};

const requestPath = (id: string) => `/api/external/v1.1/Requests/${id}`;
const sharedProcess = process.env.AWS_LAMBDA_MAX_CONCURRENCY;
delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
const inProcess = [
  await inProcessPair('get-request', 200, getRequest as Invoke, bareGet, (i) =>
    getRequestEvent(caller, `b-${run}-${Math.abs(i) % ITERATIONS}`),
  ),
  await inProcessPair('create-request', 201, createRequest as Invoke, bareCreate, (i, who) =>
    createRequestEvent(caller, validRequest(`ip-${who}-${run}-${i}`)),
  ),
];

if (sharedProcess !== undefined) process.env.AWS_LAMBDA_MAX_CONCURRENCY = sharedProcess;

// Throughput: CONNECTIONS at once through the gateway, and against a floor server making the same calls.
const storageFloor = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const externalId = /^\/requests\/([^/]+)$/.exec(req.url ?? '')?.[1];
      const event = {
        pathParameters: externalId ? { externalId } : null,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const result = req.method === 'POST' ? await bareCreate(event) : await bareGet(event);
      res.writeHead(result.statusCode, result.headers).end(result.body);
    } catch {
      res.writeHead(500).end();
    }
  });
});
await new Promise<void>((resolve) => storageFloor.listen(0, '127.0.0.1', resolve));
const storageFloorUrl = `http://127.0.0.1:${(storageFloor.address() as AddressInfo).port}`;

const throughputOf = async (name: string, requests: number, send: (i: number) => Promise<Response>) => {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (let i = next++; i < requests; i = next++) {
        try {
          const res = await send(i);
          await res.arrayBuffer();
          if (res.status >= 400) errors.push(`${name}: HTTP ${res.status}`);
        } catch (error) {
          errors.push(`${name}: ${(error as Error).message}`);
        }
      }
    }),
  );
  return (performance.now() - start) / 1000;
};
/** Floor and gateway alternately (floor, gateway, gateway, floor, twice over), after a warmup of each. */
const throughputPair = async (
  name: string,
  gateway: (i: number, round: string) => Promise<Response>,
  floorSend: (i: number, round: string) => Promise<Response>,
) => {
  const chunk = Math.ceil(THROUGHPUT_REQUESTS / 4);
  await throughputOf(`${name} (warmup)`, 100, (i) => floorSend(i, 'warm-floor'));
  await throughputOf(`${name} (warmup)`, 100, (i) => gateway(i, 'warm'));
  const seconds = { gateway: 0, floor: 0 };
  for (const round of ['a', 'b']) {
    seconds.floor += await throughputOf(`${name} floor`, chunk, (i) => floorSend(i, `floor-${round}1`));
    seconds.gateway += await throughputOf(name, chunk, (i) => gateway(i, `${round}1`));
    seconds.gateway += await throughputOf(name, chunk, (i) => gateway(i, `${round}2`));
    seconds.floor += await throughputOf(`${name} floor`, chunk, (i) => floorSend(i, `floor-${round}2`));
  }
  const gatewayRps = (4 * chunk) / seconds.gateway;
  const floorRps = (4 * chunk) / seconds.floor;
  return { name, connections: CONNECTIONS, requests: 4 * chunk, gatewayRps, floorRps, ratio: gatewayRps / floorRps };
};
const existing = (i: number) => `b-${run}-${i % ITERATIONS}`;
const throughput = inProcessOnly
  ? []
  : [
      await throughputPair(
        'GET v1.1 Requests/{id}',
        (i) => api('GET', requestPath(existing(i))),
        (i) => fetch(`${storageFloorUrl}/requests/${existing(i)}`),
      ),
      await throughputPair(
        'POST v1.1 Requests (create)',
        (i, round) => api('POST', '/api/external/v1.1/Requests', validRequest(`tp-${run}-${round}-${i}`)),
        (i, round) =>
          fetch(`${storageFloorUrl}/requests`, {
            method: 'POST',
            body: JSON.stringify(validRequest(`tp-${run}-${round}-${i}`)),
          }),
      ),
    ];

const rows = results.map((r) => ({ ...r, ratioP50: r.p50 / floor.p50, ratioP95: r.p95 / floor.p95 }));
lambda.print(`floor (empty HTTP server on loopback): p50 ${floor.p50.toFixed(3)} ms, p95 ${floor.p95.toFixed(3)} ms\n`);
for (const r of rows) {
  lambda.print(
    `${r.name.padEnd(42)} p50 ${r.p50.toFixed(2).padStart(7)} ms (${r.ratioP50.toFixed(1)}× floor)  p95 ${r.p95.toFixed(2).padStart(7)} ms (${r.ratioP95.toFixed(1)}× floor)\n`,
  );
}
for (const r of inProcess) {
  lambda.print(
    `in process, ${r.name.padEnd(15)} handler ${r.handlerMedianMs.toFixed(3)} ms vs bare handler ${r.bareMedianMs.toFixed(3)} ms per call (median of ${IN_PROCESS_CALLS}; same calls: ${r.storageCalls.join(', ')}) = ${r.ratio.toFixed(2)}× [${r.blockRatios.min?.toFixed(2)}–${r.blockRatios.max?.toFixed(2)} over ${r.blockRatios.blocks} blocks of ${BLOCK}]; CPU ${r.handlerCpuMedianMs.toFixed(3)} vs ${r.bareCpuMedianMs.toFixed(3)} ms = ${r.cpuRatio.toFixed(2)}×\n`,
  );
}
for (const r of throughput) {
  lambda.print(
    `throughput, ${r.name.padEnd(28)} ${r.connections} connections: gateway ${Math.round(r.gatewayRps)} req/s vs floor server ${Math.round(r.floorRps)} req/s (same storage calls) = ${r.ratio.toFixed(2)}× (${r.requests} requests each)\n`,
  );
}
lambda.print(`errors: ${errors.length}\n`);
lambda.print(
  `validate(Request): ${Math.round(validateOps)} ops/s = ${(validateOps / parseOps).toFixed(2)}× JSON.parse of the same body (${Math.round(parseOps)} ops/s)\n`,
);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/bench.json',
  JSON.stringify(
    {
      at: new Date().toISOString(),
      node: process.version,
      iterations: ITERATIONS,
      floor,
      endpoints: rows,
      validation: { validateOpsPerSecond: validateOps, jsonParseOpsPerSecond: parseOps, ratio: validateOps / parseOps },
      inProcess,
      throughput,
      xraySubsegments: daemon.received(),
      errors,
    },
    null,
    2,
  ),
);
lambda.print('results: bench/results/bench.json\n');
floorServer.close();
storageFloor.closeAllConnections();
storageFloor.close();
await stack.close();
await daemon.close();
if (errors.length > 0) {
  process.stderr.write(`${errors.length} error(s): ${errors.slice(0, 5).join('; ')}\n`);
  process.exit(1);
}
