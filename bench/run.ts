/**
 * `npm run bench`: latency of the request endpoints through the local stack (gateway → authorizer →
 * Middy → ajv → DynamoDB emulator), as ratios to a floor measured in the same run: an empty HTTP
 * server on the same loopback. Validation throughput is reported against JSON.parse of the same body.
 * Results go to bench/results/latest.json. Bounded: fixed iteration counts, loopback only.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '#local/stack';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
const WARMUP = 30;

const stack = await startLocalStack({ port: 0 });
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { provisioning } = await import('#lib/tenancy/provisioning');
const { validate } = await import('#lib/validation/validate');
const { validRequest } = await import('#test/support/fixtures');
const { apiKey } = await provisioning(dynamoTenantStore).createClient('bench');

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
const floor = await measure('floor: empty HTTP server', () => fetch(floorUrl));
const results = [
  await measure('GET Schemas (gateway + authorizer)', () => api('GET', '/api/external/v1.1/Schemas')),
  await measure('POST v1.1 Requests (create)', (i) =>
    api('POST', '/api/external/v1.1/Requests', validRequest(`b-${run}-${i}`)),
  ),
  await measure('GET v1.1 Requests/{id}', (i) => api('GET', `/api/external/v1.1/Requests/b-${run}-${i % ITERATIONS}`)),
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

const rows = results.map((r) => ({ ...r, ratioP50: r.p50 / floor.p50, ratioP95: r.p95 / floor.p95 }));
process.stdout.write(
  `floor (empty HTTP server on loopback): p50 ${floor.p50.toFixed(3)} ms, p95 ${floor.p95.toFixed(3)} ms\n`,
);
for (const r of rows) {
  process.stdout.write(
    `${r.name.padEnd(42)} p50 ${r.p50.toFixed(2).padStart(7)} ms (${r.ratioP50.toFixed(1)}× floor)  p95 ${r.p95.toFixed(2).padStart(7)} ms (${r.ratioP95.toFixed(1)}× floor)\n`,
  );
}
process.stdout.write(
  `validate(Request): ${Math.round(validateOps)} ops/s = ${(validateOps / parseOps).toFixed(2)}× JSON.parse of the same body (${Math.round(parseOps)} ops/s)\n`,
);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/latest.json',
  JSON.stringify(
    {
      at: new Date().toISOString(),
      node: process.version,
      iterations: ITERATIONS,
      floor,
      endpoints: rows,
      validation: { validateOpsPerSecond: validateOps, jsonParseOpsPerSecond: parseOps, ratio: validateOps / parseOps },
    },
    null,
    2,
  ),
);
process.stdout.write('results: bench/results/latest.json\n');
floorServer.close();
await stack.close();
