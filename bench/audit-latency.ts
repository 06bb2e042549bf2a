/**
 * `npm run bench:audit`: what the audit trail adds to an audited call, in process, as a ratio to a
 * floor measured in the same run. One trivial handler behind `endpoint()` is invoked with the event of
 * an unaudited route (the floor: the whole Middy stack, no audit) and with the event of an audited
 * route, in alternating rounds so that load drifts hit both alike. Whatever audit trail the tree has
 * runs: in a tree that still writes records with a CreateLogStream + PutLogEvents to CloudWatch Logs per
 * call (AUDIT_LOG_GROUP), those go to a local HTTP server that answers like CloudWatch Logs after
 * BENCH_CWL_DELAY_MS; in one that writes lines on stdout (lib/audit), nothing is sent. The server counts the calls it receives, so "no call in the request path" is
 * measured, not assumed. Stdout goes to /dev/null, one write(2) per line, as Lambda's pipe takes it.
 * Results: bench/results/audit-latency.json. Bounded: fixed counts, loopback only.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'aws-lambda';
import type { HandlerId } from '#lib/routes/route-table';

const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP = 50;
/** In-region PutLogEvents answers in a few ms; a brownout makes that seconds. */
const DELAY_MS = Number(process.env.BENCH_CWL_DELAY_MS ?? 5);

// A CloudWatch Logs stand-in: JSON 1.1 answers (`{}` to CreateLogStream, a token to PutLogEvents).
let cloudWatchCalls = 0;
const cloudWatch = createServer((req, res) => {
  cloudWatchCalls++;
  req.resume();
  req.on('end', async () => {
    await sleep(DELAY_MS);
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(String(req.headers['x-amz-target']).endsWith('PutLogEvents') ? '{"nextSequenceToken":"1"}' : '{}');
  });
});
await new Promise<void>((ready) => cloudWatch.listen(0, '127.0.0.1', ready));

// What a deployed audited function had: the log group, region and credentials; no local state folder.
Object.assign(process.env, {
  AUDIT_LOG_GROUP: '/ServiceReviewData/audit',
  AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: `http://127.0.0.1:${(cloudWatch.address() as AddressInfo).port}`,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'AKIDBENCH',
  AWS_SECRET_ACCESS_KEY: 'bench-secret',
  LOG_LEVEL: 'WARN',
  POWERTOOLS_METRICS_DISABLED: 'true',
});
delete process.env.LOCAL_STATE_DIR;
delete process.env.LOCAL_AUDIT_FILE;

const { endpoint } = await import('#lib/http/endpoint');
const { json } = await import('#lib/http/response');
const { routes } = await import('#lib/routes/route-table');

const handler = endpoint(async () => json(200, { ok: true }));
const eventOf = (handlerName: HandlerId, pathParameters: Record<string, string> | null) => {
  const route = routes.find((candidate) => candidate.handler === handlerName)!;
  return {
    httpMethod: route.method,
    resource: route.path,
    path: route.path,
    headers: {},
    multiValueHeaders: {},
    pathParameters,
    queryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'gw-bench',
      identity: { sourceIp: '192.0.2.1' },
      authorizer: { clientId: 'bench-client', keyId: 'bench-key' },
    },
  };
};
const floorEvent = eventOf('schemas/list-schemas', null);
const auditedEvent = eventOf('requests/get-request', { externalId: 'REQ-1' });
const context = (i: number) => ({ awsRequestId: `fn-${i}`, getRemainingTimeInMillis: () => 29_000 }) as Context;

/** Stdout into /dev/null while measuring: one write(2) per line, like a pipe, and no terminal in the way. */
const devNull = openSync('/dev/null', 'w');
const write = process.stdout.write;
let linesWritten = 0;
const silenceStdout = () => {
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    linesWritten++;
    if (typeof chunk === 'string') writeSync(devNull, chunk);
    else writeSync(devNull, chunk);
    (rest.find((arg) => typeof arg === 'function') as (() => void) | undefined)?.();
    return true;
  }) as typeof process.stdout.write;
};
const restoreStdout = () => {
  process.stdout.write = write;
};

const samples = { floor: [] as number[], audited: [] as number[] };
const lines = { floor: 0, audited: 0 };
const runCalls = async (name: keyof typeof samples, event: object, count: number, keep: boolean) => {
  const linesBefore = linesWritten;
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const response = await handler(event as never, context(i));
    const took = performance.now() - start;
    if (response.statusCode !== 200) throw new Error(`${name}: HTTP ${response.statusCode}`);
    if (keep) samples[name].push(took);
  }
  if (keep) lines[name] += linesWritten - linesBefore;
};

silenceStdout();
await runCalls('floor', floorEvent, WARMUP, false);
await runCalls('audited', auditedEvent, WARMUP, false);
const callsBefore = cloudWatchCalls;
const perRound = Math.ceil(CALLS / ROUNDS);
for (let round = 0; round < ROUNDS; round++) {
  await runCalls('floor', floorEvent, perRound, true);
  await runCalls('audited', auditedEvent, perRound, true);
}
const cloudWatchCallsPerCall = (cloudWatchCalls - callsBefore) / (perRound * ROUNDS);
const stdoutLinesPerCall = { floor: lines.floor / (perRound * ROUNDS), audited: lines.audited / (perRound * ROUNDS) };
restoreStdout();
closeSync(devNull);
await new Promise((closed) => cloudWatch.close(closed));

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  return { mean: values.reduce((a, b) => a + b, 0) / values.length, p50: at(50), p95: at(95), p99: at(99) };
};
const floor = stats(samples.floor);
const audited = stats(samples.audited);
const ms = (value: number) => `${value.toFixed(3)} ms`;
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
const summary = {
  commit,
  calls: perRound * ROUNDS,
  cloudWatchDelayMs: DELAY_MS,
  floor,
  audited,
  ratio: { mean: audited.mean / floor.mean, p50: audited.p50 / floor.p50, p99: audited.p99 / floor.p99 },
  addedMs: { mean: audited.mean - floor.mean, p50: audited.p50 - floor.p50, p99: audited.p99 - floor.p99 },
  cloudWatchCallsPerAuditedCall: cloudWatchCallsPerCall,
  stdoutLinesPerCall,
};
process.stdout.write(
  `audited call vs floor (${summary.calls} calls each, ${ROUNDS} rounds, commit ${commit}, CloudWatch stand-in answering after ${DELAY_MS} ms)\n` +
    `  floor    p50 ${ms(floor.p50)}  p95 ${ms(floor.p95)}  p99 ${ms(floor.p99)}  mean ${ms(floor.mean)}\n` +
    `  audited  p50 ${ms(audited.p50)}  p95 ${ms(audited.p95)}  p99 ${ms(audited.p99)}  mean ${ms(audited.mean)}\n` +
    `  ratio    p50 ${summary.ratio.p50.toFixed(2)}×  p99 ${summary.ratio.p99.toFixed(2)}×  mean ${summary.ratio.mean.toFixed(2)}×` +
    `  (+${ms(summary.addedMs.p50)} at p50)\n` +
    `  calls to CloudWatch Logs per audited call: ${cloudWatchCallsPerCall.toFixed(2)}; stdout lines per call: floor ${stdoutLinesPerCall.floor.toFixed(2)}, audited ${stdoutLinesPerCall.audited.toFixed(2)}\n`,
);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/audit-latency.json', `${JSON.stringify(summary, null, 2)}\n`);
