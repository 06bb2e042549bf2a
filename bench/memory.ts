/**
 * `npm run bench:memory`: where the local stack's memory goes under list/filter load. Batches of
 * portal-account list and filter calls, then heap and RSS after a full GC, in three set-ups, each in
 * a fresh process:
 *   direct  dynalite in-process, sent the store's queries with the SDK (no gateway, no handlers)
 *   stack   dynalite and the local stack in one process, called over HTTP (what `npm start` runs)
 *   split   dynalite in a child process, the stack in this one: each side measured on its own
 * It also counts the storage iterators dynalite has open (it closed none before local/dynalite-memory.ts).
 * Bounded (fixed call counts, loopback only); results in bench/results/memory.json. Findings:
 * docs/local-stack.md.
 */
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { watchLevelStore } from '#test/support/level-store';

const MODES = ['direct', 'stack', 'split'] as const;
type Mode = (typeof MODES)[number];
const BATCHES = Number(process.env.MEMORY_BATCHES ?? 4);
const CALLS = Number(process.env.MEMORY_CALLS ?? 2000);
const ACCOUNTS = Number(process.env.MEMORY_ACCOUNTS ?? 30);
const CONCURRENCY = 8;
const self = fileURLToPath(import.meta.url);
const execArgv = ['--expose-gc', '--import', 'tsx'];

const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

interface Sample {
  heapUsedMB: number;
  rssMB: number;
  /** Storage iterators dynalite opened and has not closed (in the process that runs dynalite). */
  openIterators?: number;
}

const settled = async (iterators?: { openIterators: number }): Promise<Sample> => {
  if (!gc) throw new Error('Run with node --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsedMB: mb(heapUsed), rssMB: mb(rss), ...(iterators ? { openIterators: iterators.openIterators } : {}) };
};

/** The "external DynamoDB" of split mode: dynalite alone, reporting its memory when asked. */
const runDynaliteChild = async () => {
  const iterators = watchLevelStore();
  const { startDynalite } = await import('#local/emulators');
  const db = await startDynalite({});
  process.on('message', async (message: string) => {
    if (message === 'memory') process.send!({ memory: await settled(iterators) });
    if (message === 'close') await db.close().then(() => process.exit(0));
  });
  process.send!({ endpoint: db.endpoint });
};

const runMode = async (mode: Mode) => {
  const iterators = mode === 'split' ? undefined : watchLevelStore();
  let child: ReturnType<typeof fork> | undefined;
  let dynamoEndpoint: string | undefined;
  if (mode === 'split') {
    child = fork(self, ['dynalite'], { execArgv });
    dynamoEndpoint = await new Promise<string>((resolve) =>
      child!.once('message', (m: { endpoint: string }) => resolve(m.endpoint)),
    );
  }
  const childSample = () =>
    new Promise<Sample>((resolve) => {
      child!.once('message', (m: { memory: Sample }) => resolve(m.memory));
      child!.send('memory');
    });

  process.env.LOG_LEVEL = 'warn';
  const { startLocalStack } = await import('#local/stack');
  const { SUITE_CLIENT_LIMITS } = await import('#test/support/limits');
  // Thousands of calls as fast as the callers go: the suite's limits, not the deployed default's.
  const stack = await startLocalStack({
    port: 0,
    defaultLimits: SUITE_CLIENT_LIMITS,
    ...(dynamoEndpoint ? { dynamoEndpoint } : {}),
  });
  const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
  const { provisioning } = await import('#lib/tenancy/provisioning');
  const { dynamo } = await import('#lib/aws/dynamodb');
  const { tableName } = await import('#lib/config/resources');
  const { portalAccountEntity } = await import('#lib/entities/portal-account');
  const { GSI1 } = await import('#lib/table');
  const admin = provisioning(dynamoTenantStore);
  const { clientId, apiKey } = await admin.createClient('memory');
  const { organizationId } = await admin.createOrganization(clientId, 'memory organization');
  const clientUserId = 'memory-user';
  await admin.createClientUser(clientId, organizationId, clientUserId);

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.baseUrl}/api/external/v1.1${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`);
  };
  for (let i = 0; i < ACCOUNTS; i++) {
    await api('POST', '/Portals/accounts', {
      externalId: `mem-${i}`,
      clientUserId,
      portalId: i % 2 ? 'availity' : 'sandbox',
      username: `user-${i}`,
      password: 'pw',
    });
  }

  // One call: a list page or a filter; in direct mode, the GSI query each of them starts with.
  const overHttp = (i: number) =>
    i % 2
      ? api('GET', `/Portals/accounts/${clientUserId}/list?pageSize=10`)
      : api('POST', '/Portals/accounts/filter', { clientUserId, portalId: 'availity', pageSize: 10 });
  const direct = async (i: number) => {
    const filtered = i % 2 === 0;
    await dynamo.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI1.name,
        KeyConditionExpression: '#pk = :pk',
        ...(filtered ? { FilterExpression: '#portal = :portal' } : {}),
        ExpressionAttributeNames: { '#pk': GSI1.partition, ...(filtered ? { '#portal': 'portalId' } : {}) },
        ExpressionAttributeValues: {
          ':pk': portalAccountEntity.keys.gsi1pk.render({ clientId, organizationId }),
          ...(filtered ? { ':portal': 'availity' } : {}),
        },
        Limit: 11,
      }),
    );
  };
  const call = mode === 'direct' ? direct : overHttp;

  const rows: Array<{ after: string; process: Sample; dynalite?: Sample }> = [];
  const record = async (after: string) => {
    rows.push({ after, process: await settled(iterators), ...(child ? { dynalite: await childSample() } : {}) });
  };
  await record('setup');
  for (let batch = 1; batch <= BATCHES; batch++) {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) await call(next++);
      }),
    );
    await record(`${batch * CALLS} calls`);
  }
  await stack.close();
  child?.send('close');
  return rows;
};

const role = process.argv[2];
if (role === 'dynalite') await runDynaliteChild();
else if (MODES.includes(role as Mode)) process.send!({ rows: await runMode(role as Mode) });
else {
  const modes = role ? role.split(',') : MODES;
  const results: Record<string, unknown> = {};
  for (const mode of modes) {
    const worker = fork(self, [mode], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const { rows } = await new Promise<{ rows: Array<{ after: string; process: Sample; dynalite?: Sample }> }>(
      (resolve, reject) => {
        worker.once('message', resolve);
        worker.once('exit', (code) => code && reject(new Error(`${mode} exited with ${code}`)));
      },
    );
    results[mode] = rows;
    process.stdout.write(`\n${mode}: ${ACCOUNTS} accounts, batches of ${CALLS} calls, ${CONCURRENCY} at a time\n`);
    console.table(
      rows.map(({ after, process: here, dynalite }) => ({
        after,
        'heap MB': here.heapUsedMB,
        'rss MB': here.rssMB,
        ...(here.openIterators !== undefined ? { 'open iterators': here.openIterators } : {}),
        ...(dynalite
          ? {
              'dynalite heap MB': dynalite.heapUsedMB,
              'dynalite rss MB': dynalite.rssMB,
              'dynalite open iterators': dynalite.openIterators,
            }
          : {}),
      })),
    );
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(
    'bench/results/memory.json',
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, batches: BATCHES, calls: CALLS, accounts: ACCOUNTS, results }, null, 2)}\n`,
  );
  process.stdout.write('\nResults: bench/results/memory.json\n');
}
