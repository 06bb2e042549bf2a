/**
 * `npm run bench:encryption-sdk`: what the AWS Encryption SDK costs the functions that seal or open
 * portal-account secrets (docs/security.md, "Encryption of portal-account secrets").
 *
 * - Bundle size and import time of each function built as the CDK construct builds it
 *   (infra/constructs/service-function.ts), with the SDK and without it: the same handler with the
 *   @aws-crypto packages replaced by empty stand-ins, which is the floor (same AWS SDK clients, same
 *   code). Import is the median of fresh Node processes, as a new Lambda container pays it. The SDK
 *   is bundled as published (no package inside it aliased), as every function is deployed.
 * - First seal and first open in a fresh process (local keyring: no network), SDK v2 against the
 *   v1 format (two AES-256-GCM operations), and the median of the following calls.
 * Results: bench/results/encryption-sdk.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { deployedBuildOptions } from './function-bundle.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const handlers = [
  'portal-accounts/create-portal-account',
  'portal-accounts/replace-portal-account',
  'rpa/issue-run-credentials',
];
// Inside the project, so that the workers' external packages resolve from its node_modules.
mkdirSync('node_modules/.cache', { recursive: true });
const dir = mkdtempSync(join(process.cwd(), 'node_modules/.cache/encryption-sdk-'));

/** Every name the project imports from @aws-crypto, as inert values: enough to import, not to seal. */
const standIn = `
export const buildEncrypt = () => ({});
export const buildDecrypt = () => ({});
export const AlgorithmSuiteIdentifier = {};
export const CommitmentPolicy = {};
export const RawAesWrappingSuiteIdentifier = {};
export class KeyringNode {}
export class RawAesKeyringNode {}
export const immutableClass = () => {};
export const KmsKeyringClass = (Base) => class extends Base {};
`;
const withoutEncryptionSdk: Plugin = {
  name: 'without-encryption-sdk',
  setup(b) {
    b.onResolve({ filter: /^@aws-crypto\// }, () => ({ path: 'stand-in', namespace: 'stand-in' }));
    b.onLoad({ filter: /.*/, namespace: 'stand-in' }, () => ({ contents: standIn, loader: 'js' }));
  },
};

/** Built as deployed (bench/function-bundle.ts: BUNDLING's options and aliases). */
const bundle = async (entry: string, outfile: string, plugins: Plugin[] = []) => {
  await build({
    ...deployedBuildOptions(),
    entryPoints: [entry],
    outfile,
    // Shipped beside the workers' bundles (infra/automation-stack.ts installedModules), not in them.
    external: ['@sparticuz/chromium', 'playwright-core'],
    plugins,
    logLevel: 'error',
  });
  return outfile;
};

const median = (samples: number[]) => samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
const fresh = (script: string, env: Record<string, string> = {}) =>
  execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, TABLE_NAME: 't', BUCKET_NAME: 'b', AWS_REGION: 'us-east-1', ...env },
  }).toString();

/**
 * Wall time and CPU time (user + system) of importing each file in a fresh process, medians; the
 * files take turns, so that a change of load on the shared machine affects them alike. CPU time is
 * the steadier of the two under load.
 */
const importTimes = (files: string[]) => {
  const samples = files.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  for (let run = 0; run < RUNS; run++) {
    files.forEach((file, index) => {
      const { wall, cpu } = JSON.parse(
        fresh(
          `const c = process.cpuUsage(); const t = performance.now(); await import(${JSON.stringify(file)}); const u = process.cpuUsage(c); process.stdout.write(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));`,
        ),
      );
      samples[index]!.wall.push(wall);
      samples[index]!.cpu.push(cpu);
    });
  }
  return samples.map(({ wall, cpu }) => ({ wall: median(wall), cpu: median(cpu) }));
};

const rows = [];
for (const handler of handlers) {
  const name = handler.replaceAll('/', '-');
  const withSdk = await bundle(`functions/${handler}.ts`, join(dir, `${name}.mjs`));
  const without = await bundle(`functions/${handler}.ts`, join(dir, `${name}-floor.mjs`), [withoutEncryptionSdk]);
  const [sdk, floor] = importTimes([withSdk, without]);
  const row = {
    handler,
    bytes: statSync(withSdk).size,
    floorBytes: statSync(without).size,
    importMs: sdk!.wall,
    floorImportMs: floor!.wall,
    importCpuMs: sdk!.cpu,
    floorImportCpuMs: floor!.cpu,
  };
  rows.push({
    ...row,
    addedBytes: row.bytes - row.floorBytes,
    importRatio: row.importMs / row.floorImportMs,
    importCpuRatio: row.importCpuMs / row.floorImportCpuMs,
  });
}

// First and steady-state seal/open in a fresh process, through the project's own modules.
const callsEntry = join(dir, 'calls.ts');
writeFileSync(
  callsEntry,
  `import { openSecret } from '${process.cwd()}/lib/crypto/open.ts';
import { sealSecret } from '${process.cwd()}/lib/crypto/seal.ts';
import { localKeyring } from '${process.cwd()}/lib/crypto/local-keyring.ts';
import { sealV1WithLocalKey } from '${process.cwd()}/test/support/legacy-envelope.ts';
const keyFile = process.env.KEY_FILE;
const context = { purpose: 'p', clientId: 'c', organizationId: 'o', portalAccountId: 'a', field: 'password' };
const keyring = localKeyring(keyFile);
const time = async (f) => { const t = performance.now(); const r = await f(); return [performance.now() - t, r]; };
const steady = async (f) => { const s = []; for (let i = 0; i < 50; i++) s.push((await time(f))[0]); return s.sort((a, b) => a - b)[25]; };
const out = {};
if (process.env.FORMAT === 'v2') {
  const [firstSeal, sealed] = await time(() => sealSecret(keyring, 'pw-123456', context));
  const [firstOpen] = await time(() => openSecret(keyring, sealed, context));
  Object.assign(out, { firstSeal, firstOpen, seal: await steady(() => sealSecret(keyring, 'pw-123456', context)),
    open: await steady(() => openSecret(keyring, sealed, context)), storedBytes: JSON.stringify(sealed).length });
} else {
  const [firstSeal, sealed] = await time(() => sealV1WithLocalKey(keyFile, 'pw-123456', context));
  const [firstOpen] = await time(() => openSecret(keyring, sealed, context));
  Object.assign(out, { firstSeal, firstOpen, seal: await steady(() => sealV1WithLocalKey(keyFile, 'pw-123456', context)),
    open: await steady(() => openSecret(keyring, sealed, context)), storedBytes: JSON.stringify(sealed).length });
}
process.stdout.write(JSON.stringify(out));
`,
);
const callsBundle = await bundle(callsEntry, join(dir, 'calls.mjs'));
const keyFile = join(dir, 'secrets.key');
const calls = (format: 'v1' | 'v2') => {
  const samples = Array.from(
    { length: RUNS },
    () =>
      JSON.parse(
        fresh(`await import(${JSON.stringify(callsBundle)});`, { KEY_FILE: keyFile, FORMAT: format }),
      ) as Record<string, number>,
  );
  return Object.fromEntries(Object.keys(samples[0]!).map((k) => [k, median(samples.map((s) => s[k]!))]));
};
const v1 = calls('v1');
const v2 = calls('v2');

const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
for (const r of rows) {
  process.stdout.write(
    `${r.handler.padEnd(40)} ${kb(r.bytes).padStart(8)} (floor ${kb(r.floorBytes)}, +${kb(r.addedBytes)})  import ${r.importMs.toFixed(1)} ms (floor ${r.floorImportMs.toFixed(1)} ms, ${r.importRatio.toFixed(2)}×), CPU ${r.importCpuMs.toFixed(1)} ms (floor ${r.floorImportCpuMs.toFixed(1)} ms, ${r.importCpuRatio.toFixed(2)}×)\n`,
  );
}
for (const [name, v] of [
  ['v1 (own AES-GCM)', v1],
  ['v2 (Encryption SDK)', v2],
] as const) {
  process.stdout.write(
    `${name.padEnd(22)} first seal ${v.firstSeal!.toFixed(2)} ms, first open ${v.firstOpen!.toFixed(2)} ms; then seal ${v.seal!.toFixed(3)} ms, open ${v.open!.toFixed(3)} ms; stored ${v.storedBytes} bytes\n`,
  );
}

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/encryption-sdk.json',
  JSON.stringify({ at: new Date().toISOString(), node: process.version, runs: RUNS, handlers: rows, v1, v2 }, null, 2),
);
process.stdout.write('results: bench/results/encryption-sdk.json\n');
rmSync(dir, { recursive: true, force: true });
