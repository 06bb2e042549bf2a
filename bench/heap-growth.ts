/**
 * `npm run bench:heap`: where the local stack's memory goes under the load mix of `npm run load`
 * (creates, merge patches, replaces, uploads, reads, probes; test/support/load.ts). The stack runs alone
 * in this process with the suite's client limits, its table in memory as the tests keep it, or on disk
 * as `npm start` does (HEAP_STORE=disk); the callers run in a child process, so their bookkeeping is not
 * counted. After HEAP_WARMUP calls (default 2,000), they send HEAP_REQUESTS more (default 10,000) in
 * HEAP_PHASES phases (default 2). After the warm-up and each phase: memory after a full GC, dynalite's
 * open storage iterators and the bytes it stores; after the warm-up and the last phase, a heap snapshot
 * (.local/heap/; HEAP_SNAPSHOTS=0 skips them, which also keeps RSS comparable), then compared in another
 * process (bench/heap-snapshot.ts). Bounded (fixed call counts, loopback only). Results in
 * bench/results/heap-growth.json; exits 1 if the load saw a lost write, a leak or a 5xx. Findings:
 * docs/local-stack.md, "Memory".
 */
import { fork } from 'node:child_process';
import { Console } from 'node:console';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { watchLevelStore } from '#test/support/level-store';
import type { SnapshotComparison } from './heap-snapshot.ts';

const WARMUP = Number(process.env.HEAP_WARMUP ?? 2000);
const REQUESTS = Number(process.env.HEAP_REQUESTS ?? 10_000);
const PHASES = Number(process.env.HEAP_PHASES ?? 2);
const SNAPSHOTS = process.env.HEAP_SNAPSHOTS !== '0';
/** `disk`: dynalite on disk (LevelDB), as `npm start` keeps it in .local/; by default in memory, as the tests. */
const ON_DISK = process.env.HEAP_STORE === 'disk';
const self = fileURLToPath(import.meta.url);
const snapshotDir = join('.local', 'heap');

const gc = (globalThis as { gc?: () => void }).gc;
const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

interface PhaseReport {
  requests: number;
  verificationRequests: number;
  seconds: number;
  acknowledged: Record<string, number>;
  serverErrors: number;
  failures: string[];
}

/** The callers: the load mix against the stack, one phase per message, in a process of their own. */
const runCallers = async () => {
  const { loadFailures, runLoad } = await import('#test/support/load');
  process.on('message', async ({ baseUrl, requests }: { baseUrl: string; requests: number }) => {
    const started = Date.now();
    const { result } = await runLoad({ baseUrl, durationMs: 600_000, maxRequests: requests });
    const report: PhaseReport = {
      requests: result.requests,
      verificationRequests: result.verificationRequests,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      acknowledged: result.acknowledged,
      serverErrors: result.serverErrors,
      failures: loadFailures(result),
    };
    process.send!(report);
  });
  process.send!('ready');
};

const settledMemory = async () => {
  if (!gc) throw new Error('Run with node --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return {
    rssMiB: mib(rss),
    heapUsedMiB: mib(heapUsed),
    heapTotalMiB: mib(heapTotal),
    externalMiB: mib(external),
    arrayBuffersMiB: mib(arrayBuffers),
  };
};

const runStack = async () => {
  const level = watchLevelStore();
  process.env.LOG_LEVEL = 'warn';
  const { startLocalStack } = await import('#local/stack');
  const { SUITE_CLIENT_LIMITS } = await import('#test/support/limits');
  const stateDir = ON_DISK ? mkdtempSync(join(tmpdir(), 'heap-growth-')) : undefined;
  const stack = await startLocalStack({
    port: 0,
    defaultLimits: SUITE_CLIENT_LIMITS,
    ...(stateDir ? { stateDir } : {}),
  });
  // The callers provision their clients in the stack's table, so they get its environment; their handlers
  // (none) run one at a time.
  const env = { ...process.env };
  delete env.AWS_LAMBDA_MAX_CONCURRENCY;
  const callers = fork(self, ['callers'], { env, execArgv: ['--import', 'tsx'] });
  await new Promise((resolve) => callers.once('message', resolve));
  const phase = (requests: number) =>
    new Promise<PhaseReport>((resolve) => {
      callers.once('message', resolve);
      callers.send({ baseUrl: stack.baseUrl, requests });
    });

  mkdirSync(snapshotDir, { recursive: true });
  const rows: Array<Record<string, unknown>> = [];
  const snapshots: string[] = [];
  let served = 0;
  const sample = async (after: string, snapshot: boolean) => {
    const memory = await settledMemory();
    const stored = await level.stored();
    const file =
      snapshot && SNAPSHOTS
        ? writeHeapSnapshot(join(snapshotDir, `${after.replaceAll(' ', '-')}.heapsnapshot`))
        : undefined;
    if (file) snapshots.push(file);
    rows.push({
      after,
      served,
      ...memory,
      openIterators: level.openIterators,
      stored,
      ...(file ? { snapshot: file } : {}),
    });
    process.stderr.write(
      `${after}: ${served} calls served, ${JSON.stringify(memory)}, ${level.openIterators} open iterators\n`,
    );
  };
  const phases: PhaseReport[] = [];
  const drive = async (requests: number) => {
    const report = await phase(requests);
    phases.push(report);
    served += report.requests + report.verificationRequests;
  };

  await sample('start', false);
  await drive(WARMUP);
  await sample('warm-up', true);
  for (let n = 1; n <= PHASES; n++) {
    await drive(Math.round(REQUESTS / PHASES));
    await sample(`phase ${n}`, n === PHASES);
  }
  callers.kill();
  await stack.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  return { rows, phases, snapshots };
};

const printComparison = ({ before, after, newObjects, byConstructor, heldBy }: SnapshotComparison) => {
  const MB = (bytes: number) => (bytes / 1e6).toFixed(1);
  process.stderr.write(
    `\nHeap snapshots: ${MB(before.bytes)} → ${MB(after.bytes)} MB; new objects: ${newObjects.objects} (${MB(newObjects.bytes)} MB)\n`,
  );
  const out = new Console(process.stderr);
  out.table(byConstructor.slice(0, 8).map(({ name, count, bytes }) => ({ constructor: name, count, MB: MB(bytes) })));
  out.table(
    heldBy.slice(0, 8).map(({ name, count, bytes }) => ({ 'new objects held by': name, count, MB: MB(bytes) })),
  );
};

const role = process.argv[2];
if (role === 'callers') await runCallers();
else if (role === 'compare') {
  const { compareSnapshots } = await import('./heap-snapshot.ts');
  process.send!(compareSnapshots(process.argv[3]!, process.argv[4]!), () => process.disconnect());
} else {
  const started = Date.now();
  const { rows, phases, snapshots } = await runStack();
  const seconds = Math.round((Date.now() - started) / 1000);
  // The stack's audit trail goes to stdout, whatever the log level: the bench reports on stderr.
  new Console(process.stderr).table(rows.map(({ stored, snapshot, ...row }) => row));
  const comparison =
    snapshots.length === 2
      ? await new Promise<SnapshotComparison>((resolve, reject) => {
          const analysis = fork(self, ['compare', ...snapshots], {
            execArgv: ['--max-old-space-size=8192', '--import', 'tsx'],
          });
          analysis.once('message', resolve);
          analysis.once('exit', (code) => code && reject(new Error(`compare exited with ${code}`)));
        })
      : undefined;
  if (comparison) printComparison(comparison);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/heap-growth.json',
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, seconds, store: ON_DISK ? 'disk' : 'memory', warmup: WARMUP, requests: REQUESTS, rows, phases, comparison }, null, 2)}\n`,
  );
  process.stderr.write(`\n${seconds} s. Results: bench/results/heap-growth.json\n`);
  const failures = phases.flatMap((phase) => phase.failures);
  if (failures.length) {
    process.stderr.write(`FAILED: ${failures.join('; ')}\n`);
    process.exit(1);
  }
}
