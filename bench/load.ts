/**
 * `npm run load`: load without loss. Starts the local stack in this process (loopback, free port),
 * provisions several clients, and has their concurrent callers mix creates, merge patches,
 * replaces, attachment uploads and reads for a fixed time (LOAD_SECONDS or `-- --seconds N`,
 * default 20); then checks that every acknowledged write is stored exactly as acknowledged and that
 * no client saw another's data (test/support/load.ts). Prints the counts and the process's memory
 * (the stack and the callers share it) before and after, writes bench/results/load.json, and exits
 * non-zero on a lost write, a cross-client leak, a 5xx or any other unexpected answer.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { startLocalStack } from '#local/stack';
import { dropTable } from '#local/table';
import { SUITE_CLIENT_LIMITS } from '#test/support/limits';

const argument = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const seconds = Number(argument('seconds') ?? process.env.LOAD_SECONDS ?? 20);
const clients = Number(argument('clients') ?? process.env.LOAD_CLIENTS ?? 4);
const callersPerClient = Number(argument('callers') ?? process.env.LOAD_CALLERS ?? 3);
if (!(seconds > 0 && seconds <= 600)) throw new Error('--seconds must be between 0 and 600');

process.env.LOG_LEVEL ??= 'warn';
// Another DynamoDB (DYNAMODB_ENDPOINT) gets a table of the run's own, dropped at the end.
const dynamoEndpoint = process.env.DYNAMODB_ENDPOINT;
const tableName = `service-review-load-${Date.now()}`;
// Several callers per client, as fast as they can: the suite's limits, not the deployed default's.
const stack = await startLocalStack({
  port: 0,
  defaultLimits: SUITE_CLIENT_LIMITS,
  ...(dynamoEndpoint ? { dynamoEndpoint, tableName } : {}),
});
const { loadFailures, runLoad } = await import('#test/support/load');

const gc = (globalThis as { gc?: () => void }).gc;
const memory = () => {
  gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMB: Math.round(rss / 1024 / 1024), heapUsedMB: Math.round(heapUsed / 1024 / 1024), afterGc: !!gc };
};

const before = memory();
process.stdout.write(
  `Load: ${clients} clients × ${callersPerClient} callers for ${seconds} s against ${stack.baseUrl} …\n`,
);
const { result } = await runLoad({ baseUrl: stack.baseUrl, durationMs: seconds * 1000, clients, callersPerClient });
const after = memory();
await stack.close();
if (dynamoEndpoint) await dropTable(dynamoEndpoint, tableName);

const failures = loadFailures(result);
const lines = [
  '',
  `requests:     ${result.requests} in ${(result.durationMs / 1000).toFixed(1)} s (${Math.round(result.requests / (result.durationMs / 1000))}/s), then ${result.verificationRequests} to check`,
  ...Object.entries(result.byOperation).map(
    ([operation, statuses]) => `  ${operation.padEnd(16)} ${JSON.stringify(statuses)}`,
  ),
  `acknowledged: ${JSON.stringify(result.acknowledged)}`,
  `refused:      ${JSON.stringify(result.refused)} (409: merge patch gave up under contention; 412: stale If-Match)`,
  `errors:       ${JSON.stringify(result.errors)}`,
  `5xx:          ${result.serverErrors}`,
  `lost writes:  ${result.lostWrites.length}`,
  `leaks:        ${result.leaks.length}`,
  `verified:     ${result.verified.requests} requests, ${result.verified.attachments} attachments, ${result.verified.crossClientProbes} cross-client probes`,
  `memory:       rss ${before.rssMB} → ${after.rssMB} MB, heap ${before.heapUsedMB} → ${after.heapUsedMB} MB${after.afterGc ? ' (after GC)' : ''}; dynalite shares this process (docs/local-stack.md)`,
  failures.length ? `FAILED: ${failures.join('; ')}` : 'OK: no lost writes, no leaks, no 5xx',
  '',
];
process.stdout.write(lines.join('\n'));
for (const lost of result.lostWrites.slice(0, 10)) process.stdout.write(`  lost: ${JSON.stringify(lost)}\n`);
for (const leak of result.leaks.slice(0, 10)) process.stdout.write(`  leak: ${JSON.stringify(leak)}\n`);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/load.json',
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, seconds, memory: { before, after }, ...result, failures }, null, 2)}\n`,
);
process.stdout.write('Results: bench/results/load.json\n');
process.exit(failures.length ? 1 : 0);
