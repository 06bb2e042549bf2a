/**
 * `npm run bench:contention`: many merge patches of one request at once, on the local stack in this
 * process (loopback, free port). Each writer sets a member of its own, so every acknowledged patch must
 * be in the final document and no refused one may be. Prints the count of each status, the latency of
 * the 200s and of the 409s (p50/p95), whether every 409 carried Retry-After, and whether the stored
 * request holds exactly the acknowledged writes; writes bench/results/contention.json.
 *
 * First the floor: as many patches at once, each of a request of its own (no conflicts), so that what
 * the stack itself costs at that concurrency (everything shares this process: gateway, handlers,
 * dynalite) can be told from what contention adds. Writers: `-- --writers N` or CONTENTION_WRITERS
 * (default 200); `-- --burn N` or CPU_BURN_THREADS spins N threads throughout (default none:
 * test/support/cpu-burner.ts), as a loaded machine would. The audit trail's lines go to stdout
 * (`| grep -v '"Audit '` hides them). Exits non-zero on a lost or phantom write, or on any status but
 * 200 and 409.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '#local/stack';
import { startCpuBurner } from '#test/support/cpu-burner';
import { SUITE_CLIENT_LIMITS } from '#test/support/limits';

const argument = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const writers = Number(argument('writers') ?? process.env.CONTENTION_WRITERS ?? 200);
if (!(Number.isInteger(writers) && writers > 0 && writers <= 1000)) throw new Error('--writers must be 1 to 1000');
const burnThreads = Number(argument('burn') ?? process.env.CPU_BURN_THREADS ?? 0);
if (!(Number.isInteger(burnThreads) && burnThreads >= 0 && burnThreads <= 64))
  throw new Error('--burn must be 0 to 64');

process.env.LOG_LEVEL ??= 'warn';
// All writers belong to one client: the suite's limits, so the gateway's throttle does not answer first.
const stack = await startLocalStack({ port: 0, defaultLimits: SUITE_CLIENT_LIMITS });
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { provisioning } = await import('#lib/tenancy/provisioning');
const { minimalRequest } = await import('#test/support/fixtures');

const { apiKey } = await provisioning(dynamoTenantStore).createClient('contention bench');
const url = (path: string) => `${stack.baseUrl}/api/external${path}`;
const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
const run = Date.now().toString(36);

const createRequest = async (id: string) => {
  const body = JSON.stringify({ ...minimalRequest(id), procedures: {} });
  const created = await fetch(url('/v1.1/Requests'), { method: 'POST', headers, body });
  if (created.status !== 201) throw new Error(`request ${id} was not created: ${created.status}`);
};

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  detail?: string;
}

const patchOnce = async (id: string, writer: number): Promise<Answer> => {
  const start = performance.now();
  const response = await fetch(url(`/v1/Requests/${id}`), {
    method: 'PATCH',
    headers: { ...headers, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ procedures: { [`writer${writer}`]: writer } }),
  });
  const body = (await response.json()) as { detail?: string };
  return {
    status: response.status,
    ms: performance.now() - start,
    retryAfter: response.headers.get('retry-after'),
    ...(response.status === 200 ? {} : { detail: body.detail }),
  };
};

/** All writers at once, writer i patching idOf(i); the answers and the wall time. */
const concurrently = async (idOf: (writer: number) => string) => {
  const started = performance.now();
  const answers = await Promise.all(Array.from({ length: writers }, (_, writer) => patchOnce(idOf(writer), writer)));
  return { answers, wallMs: performance.now() - started };
};

const percentile = (values: number[], p: number) => {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);
};
const latencyOf = (answers: Answer[], status: number) => {
  const ms = answers.filter((answer) => answer.status === status).map((answer) => answer.ms);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), max: percentile(ms, 100) };
};
const countsOf = (values: Array<string | number>) => {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
};

const floorIds = Array.from({ length: writers }, (_, writer) => `contention-floor-${run}-${writer}`);
for (const id of floorIds) await createRequest(id);
const contendedId = `contention-${run}`;
await createRequest(contendedId);

process.stdout.write(
  `${writers} concurrent merge patches against ${stack.baseUrl}, ${burnThreads} CPU burner threads …\n`,
);
const burner = startCpuBurner(burnThreads);
const floor = await concurrently((writer) => floorIds[writer]!);
const contended = await concurrently(() => contendedId);
await burner.stop();

const stored = (await (await fetch(url(`/v1.1/Requests/${contendedId}`), { headers })).json()) as {
  version: number;
  procedures: Record<string, number>;
};
await stack.close();

const { answers } = contended;
const conflicts = answers.filter((answer) => answer.status === 409);
const acknowledged = answers.flatMap((answer, writer) => (answer.status === 200 ? [`writer${writer}`] : []));
const lost = acknowledged.filter((member) => !(member in stored.procedures));
const phantom =
  Object.keys(stored.procedures).filter((member) => !acknowledged.includes(member)).length +
  (stored.version === 1 + acknowledged.length ? 0 : 1);
const unexpected = [...floor.answers, ...answers].filter((answer) => ![200, 409].includes(answer.status)).length;

const summary = {
  date: new Date().toISOString(),
  node: process.version,
  writers,
  burnThreads,
  floor: {
    wallMs: Math.round(floor.wallMs),
    statuses: countsOf(floor.answers.map((answer) => answer.status)),
    latencyMs: latencyOf(floor.answers, 200),
  },
  wallMs: Math.round(contended.wallMs),
  statuses: countsOf(answers.map((answer) => answer.status)),
  latencyMs: { ok: latencyOf(answers, 200), conflict: latencyOf(answers, 409) },
  everyConflictHasRetryAfter: conflicts.every((answer) => answer.retryAfter !== null),
  retryAfterSeconds: countsOf(conflicts.map((answer) => answer.retryAfter ?? 'none')),
  conflictDetails: [...new Set(conflicts.map((answer) => answer.detail))],
  finalVersion: stored.version,
  lostWrites: lost.length,
  phantomWrites: phantom,
};
const show = (l: { p50: number | null; p95: number | null; max: number | null }) =>
  `p50 ${l.p50 ?? '-'} ms, p95 ${l.p95 ?? '-'} ms, max ${l.max ?? '-'} ms`;
process.stdout.write(
  [
    `floor:        ${JSON.stringify(summary.floor.statuses)} in ${(floor.wallMs / 1000).toFixed(1)} s (each its own request), ${show(summary.floor.latencyMs)}`,
    `one request:  ${JSON.stringify(summary.statuses)} in ${(contended.wallMs / 1000).toFixed(1)} s`,
    `200 latency:  ${show(summary.latencyMs.ok)}`,
    `409 latency:  ${show(summary.latencyMs.conflict)}`,
    `Retry-After:  on ${conflicts.filter((answer) => answer.retryAfter !== null).length} of ${conflicts.length} 409s ${JSON.stringify(summary.retryAfterSeconds)}`,
    `409 detail:   ${JSON.stringify(summary.conflictDetails)}`,
    `stored:       version ${stored.version}, ${Object.keys(stored.procedures).length} members; lost ${lost.length}, phantom ${phantom}`,
    'Results: bench/results/contention.json',
    '',
  ].join('\n'),
);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/contention.json', `${JSON.stringify(summary, null, 2)}\n`);
process.exit(lost.length || phantom || unexpected ? 1 : 0);
