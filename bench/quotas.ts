/**
 * `npx tsx bench/quotas.ts`: what the storage quotas add to an upload or a portal-account create,
 * on the local stack's DynamoDB (dynalite, in process). A reservation is a GetItem of the Client item
 * (the client's own quotas) and one conditional UpdateItem; its release one UpdateItem. Each is shown
 * as a ratio to a plain consistent GetItem measured in the same run (the floor: one table call).
 * Medians of ROUNDS rounds of BATCH sequential calls; results: bench/results/quotas.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '#local/stack';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const BATCH = Number(process.env.BENCH_BATCH ?? 100);

process.env.LOG_LEVEL ??= 'warn';
const stack = await startLocalStack({ port: 0 });
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { dynamoStorageQuotas: quotas } = await import('#lib/tenancy/storage-quotas-service');
const { provisioning } = await import('#lib/tenancy/provisioning');

const admin = provisioning(dynamoTenantStore);
const { clientId } = await admin.createClient('quota bench');
const { organizationId } = await admin.createOrganization(clientId, 'quota bench organization');

/** Median milliseconds per call of `fn`, over ROUNDS rounds of BATCH calls. */
const perCall = async (fn: () => Promise<unknown>) => {
  for (let i = 0; i < BATCH; i++) await fn();
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    for (let i = 0; i < BATCH; i++) await fn();
    samples.push((performance.now() - start) / BATCH);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
};

const floor = await perCall(() => dynamoTenantStore.getOrganization(clientId, organizationId));
const measured = {
  'attachment bytes: reserve + release': await perCall(async () => {
    await quotas.reserveAttachmentBytes(clientId, 4096);
    await quotas.releaseAttachmentBytes(clientId, 4096);
  }),
  'portal account: reserve + release': await perCall(async () => {
    await quotas.reservePortalAccount(clientId, organizationId);
    await quotas.releasePortalAccount(clientId, organizationId);
  }),
};
await stack.close();

const rows = Object.entries(measured).map(([name, ms]) => ({
  name,
  ms: +ms.toFixed(3),
  ratio: +(ms / floor).toFixed(2),
}));
process.stdout.write(
  [
    `floor (one consistent GetItem): ${floor.toFixed(3)} ms`,
    ...rows.map(({ name, ms, ratio }) => `${name.padEnd(38)} ${ms.toFixed(3)} ms  ${ratio.toFixed(2)}× the floor`),
    'Expected about 3× (GetItem of the Client item, UpdateItem to reserve, UpdateItem to release).',
    '',
  ].join('\n'),
);
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/quotas.json',
  `${JSON.stringify({ at: new Date().toISOString(), rounds: ROUNDS, batch: BATCH, floorMs: +floor.toFixed(3), rows }, null, 2)}\n`,
);
