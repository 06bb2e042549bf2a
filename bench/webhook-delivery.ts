/**
 * `npm run bench:webhooks`: what the function path of webhook delivery on AWS costs (docs/webhooks.md,
 * "On AWS: API destinations or a function"). The two delivery functions' bundles as deployed (size and
 * largest contributors); then, per round, a fresh Node 22 process that imports DeliverWebhookEvents'
 * bundle (import CPU and wall time, as a new Lambda container does) and hands it a queued event as SQS
 * would (first invocation), then a second one (warm), against dynalite and a receiver on loopback: the
 * invocation's time and the time from its start until the receiver had the signed POST. Medians over
 * BENCH_ROUNDS (default 9) [min–max], wall time on whatever this machine is. The local keyring opens the
 * secret (on AWS a KMS Decrypt per subscription and attempt: add its latency). Results:
 * bench/results/webhook-delivery.json.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startDynalite } from '#local/emulators';
import { ensureTable, localCredentials } from '#local/table';
import { bundleFunction, ownerOf } from './function-bundle.ts';

const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 9));
const HANDLERS = ['webhooks/deliver-webhook-events', 'webhooks/deliver-due-webhooks'];
const exec = promisify(execFile);
const workDir = resolve('node_modules/.cache/bench-webhook-delivery');
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });

const dynalite = await startDynalite({});
const env: Record<string, string> = {
  ...localCredentials,
  TABLE_NAME: 'service-review',
  AWS_ENDPOINT_URL_DYNAMODB: dynalite.endpoint,
  LOCAL_STATE_DIR: join(workDir, 'state'),
  WEBHOOK_URL_POLICY: 'local',
  POWERTOOLS_LOG_LEVEL: 'WARN',
};
Object.assign(process.env, env);
await ensureTable(dynalite.endpoint, env.TABLE_NAME!);

// Loaded once the environment is set: their SDK client and keyring read it.
const { webhooksWithSecrets } = await import('#lib/webhooks/service-with-secrets');
const { newEvent } = await import('#lib/events/events');
const { outboxItemOf } = await import('#lib/events/outbox');
const { outboxEntity } = await import('#lib/entities/outbox');
const { EVENT_SOURCE } = await import('#lib/events/bus-event');

// --- A receiver on loopback: when each event's POST arrived.
const arrivals = new Map<string, number>();
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    arrivals.set(String(request.headers['webhook-id']), Date.now());
    response.writeHead(204).end();
  });
});
await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', ready));
const clientId = `bench-${Date.now().toString(36)}`;
await webhooksWithSecrets.create(
  { clientId },
  { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['automation.batch_finished'] },
);

/** An SQS event of one message: the EventBridge event the pipe puts on the bus for a new outbox item. */
const sqsEvent = () => {
  const event = newEvent('automation.batch_finished', clientId, new Date().toISOString(), {
    batchId: crypto.randomUUID(),
    total: 1,
    counts: { succeeded: 1, failed: 0 },
  });
  const image = marshall(outboxEntity.toItem(outboxItemOf(event)), { removeUndefinedValues: true });
  const body = JSON.stringify({
    version: '0',
    id: crypto.randomUUID(),
    'detail-type': event.type,
    source: EVENT_SOURCE,
    time: event.occurredAt,
    resources: [],
    detail: (image.event as { M: unknown }).M,
  });
  return { eventId: event.id, sqs: { Records: [{ messageId: crypto.randomUUID(), body }] } };
};

// --- Bundles, as service-function.ts builds them.
const bundles: Record<string, { kb: number; top: Array<[string, number]>; file: string }> = {};
for (const handler of HANDLERS) {
  const built = await bundleFunction(handler);
  const folder = join(workDir, handler.replaceAll('/', '-'));
  mkdirSync(folder);
  const file = join(folder, 'index.mjs');
  writeFileSync(file, built.code);
  writeFileSync(`${file}.map`, built.sourceMap);
  const owners = new Map<string, number>();
  for (const [input, bytes] of Object.entries(built.inputs)) {
    owners.set(ownerOf(input), (owners.get(ownerOf(input)) ?? 0) + bytes);
  }
  const top = [...owners].sort((a, b) => b[1] - a[1]).slice(0, 6);
  bundles[handler] = { kb: Math.round(built.bytes / 1024), top, file };
}

/** One cold container: import, first invocation, a warm one; the times it measured and the events it sent. */
const coldRound = async () => {
  const [first, second] = [sqsEvent(), sqsEvent()];
  const script = `
    const cpu = process.cpuUsage(); const t0 = performance.now();
    const { handler } = await import(${JSON.stringify(bundles[HANDLERS[0]!]!.file)});
    const importCpu = process.cpuUsage(cpu); const imported = performance.now();
    const context = { functionName: 'DeliverWebhookEvents', awsRequestId: 'r', getRemainingTimeInMillis: () => 90000 };
    const startedFirst = Date.now(); const a = performance.now();
    const firstAnswer = await handler(${JSON.stringify(first.sqs)}, context);
    const b = performance.now(); const startedSecond = Date.now();
    const secondAnswer = await handler(${JSON.stringify(second.sqs)}, context);
    const c = performance.now();
    process.stdout.write(JSON.stringify({ importCpuMs: (importCpu.user + importCpu.system) / 1000,
      importMs: imported - t0, firstMs: b - a, warmMs: c - b, startedFirst, startedSecond,
      failures: [...firstAnswer.batchItemFailures, ...secondAnswer.batchItemFailures].length }));`;
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, ...env, AWS_LAMBDA_FUNCTION_NAME: 'DeliverWebhookEvents' },
  });
  const measured = JSON.parse(stdout.trim().split('\n').at(-1)!);
  if (measured.failures > 0) throw new Error('a queued event was reported failed');
  const arrived = (eventId: string) => {
    const at = arrivals.get(eventId);
    if (at === undefined) throw new Error(`${eventId} never reached the receiver`);
    return at;
  };
  return {
    ...measured,
    firstToReceiverMs: arrived(first.eventId) - measured.startedFirst,
    warmToReceiverMs: arrived(second.eventId) - measured.startedSecond,
  };
};

const rounds: Array<Record<string, number>> = [];
for (let round = 0; round < ROUNDS; round++) rounds.push(await coldRound());
const stats = (key: string) => {
  const values = rounds.map((round) => round[key] as number).sort((a, b) => a - b);
  return { median: values[Math.floor(values.length / 2)]!, min: values[0]!, max: values.at(-1)! };
};
const figure = (key: string) => {
  const { median, min, max } = stats(key);
  return `${median.toFixed(1)} ms [${min.toFixed(1)}–${max.toFixed(1)}]`;
};

for (const [handler, { kb, top }] of Object.entries(bundles)) {
  console.log(
    `${handler}: ${kb} KB; ${top.map(([owner, bytes]) => `${owner} ${Math.round(bytes / 1024)} KB`).join(', ')}`,
  );
}
console.log(`DeliverWebhookEvents, ${ROUNDS} cold containers (median [min–max]):`);
for (const [label, key] of [
  ['import, CPU', 'importCpuMs'],
  ['import, wall', 'importMs'],
  ['first invocation (one event, one subscription)', 'firstMs'],
  ['  its POST at the receiver after', 'firstToReceiverMs'],
  ['warm invocation', 'warmMs'],
  ['  its POST at the receiver after', 'warmToReceiverMs'],
] as const) {
  console.log(`  ${label}: ${figure(key)}`);
}
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/webhook-delivery.json',
  `${JSON.stringify(
    {
      rounds: ROUNDS,
      bundles,
      measured: Object.fromEntries(
        Object.keys(rounds[0]!)
          .filter((key) => key.endsWith('Ms'))
          .map((key) => [key, stats(key)]),
      ),
    },
    null,
    2,
  )}\n`,
);
receiver.close();
await dynalite.close();
