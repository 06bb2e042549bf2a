/**
 * `npm run bench:bundles`: every deployed function's bundle size against the 700 KB budget, with
 * its largest contributors (packages and project folders, by bytes in the minified bundle).
 * Then, for a few representative functions, the time to import the bundle in a fresh Node process
 * (median of BENCH_RUNS) with and without `--enable-source-maps`, as ratios to importing an empty
 * module the same way. Results: bench/results/bundle-sizes.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleFunction, deployedFunctions, ownerOf } from './function-bundle.ts';
import { lambdaEnvironment } from './lambda-environment.ts';

const BUDGET_BYTES = 700 * 1024;
const TOP = Number(process.env.BENCH_TOP ?? 8);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const IMPORTED = [
  'requests/get-request',
  'requests/create-request',
  'attachments/create-attachment',
  'portal-accounts/create-portal-account',
  'rpa/get-rpa-run',
  'rpa/finish-batch',
];
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;

/** No call is made on import, so nothing is sent: an address only, as Lambda sets it. */
const XRAY_DAEMON = '169.254.79.129:2000';
const dir = mkdtempSync(join(tmpdir(), 'bundle-sizes-'));
/**
 * One import of `file` in a fresh process (what a new Lambda container does): the CPU time it
 * took, in ms. CPU time, not wall time: on a shared machine, waiting for a core is not the import's.
 */
const importOnce = (file: string, handler: string, nodeOptions: string[] = []) => {
  const script = `const c = process.cpuUsage(); await import(${JSON.stringify(file)}); const d = process.cpuUsage(c); process.stdout.write(String((d.user + d.system) / 1000));`;
  return Number(
    execFileSync(process.execPath, [...nodeOptions, '--input-type=module', '-e', script], {
      // The deployed function's variables (bench/lambda-environment.ts), its route's names, nothing of this process.
      env: {
        PATH: process.env.PATH ?? '',
        ...lambdaEnvironment(handler, XRAY_DAEMON),
        TABLE_NAME: 't',
        BUCKET_NAME: 'b',
      },
    }),
  );
};
const median = (samples: number[]) => samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
/** Medians of the variants' import times, sampled in turns so that load drifts hit each alike. */
const importMedians = (variants: (() => number)[]) => {
  const samples: number[][] = variants.map(() => []);
  for (let run = 0; run < RUNS; run++) {
    for (const [i, variant] of variants.entries()) samples[i]!.push(variant());
  }
  return samples.map(median);
};
const empty = join(dir, 'empty.mjs');
writeFileSync(empty, 'export const handler = async () => ({});\n');

const rows = [];
const imports = [];
for (const { handler, installedModules } of deployedFunctions()) {
  const bundle = await bundleFunction(handler, installedModules);
  if (IMPORTED.includes(handler)) {
    // As CDK ships it: index.mjs, its `sourceMappingURL` naming index.mjs.map beside it.
    const folder = join(dir, handler.replaceAll('/', '-'));
    mkdirSync(folder);
    const file = join(folder, 'index.mjs');
    writeFileSync(file, bundle.code);
    writeFileSync(join(folder, 'index.mjs.map'), bundle.sourceMap);
    const [floorMs, plain, withSourceMaps] = importMedians([
      () => importOnce(empty, handler),
      () => importOnce(file, handler),
      () => importOnce(file, handler, ['--enable-source-maps']),
    ]) as [number, number, number];
    imports.push({ handler, bytes: bundle.bytes, floorMs, importMs: plain, withSourceMapsMs: withSourceMaps });
  }
  const byOwner = new Map<string, number>();
  for (const [input, bytes] of Object.entries(bundle.inputs)) {
    byOwner.set(ownerOf(input), (byOwner.get(ownerOf(input)) ?? 0) + bytes);
  }
  const top = [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  rows.push({ handler, bytes: bundle.bytes, ratioToBudget: bundle.bytes / BUDGET_BYTES, top: Object.fromEntries(top) });
  process.stdout.write(
    `${handler.padEnd(42)} ${kb(bundle.bytes).padStart(8)} ${(bundle.bytes / BUDGET_BYTES).toFixed(2)}× budget ${bundle.bytes < BUDGET_BYTES ? 'ok' : 'OVER'}\n` +
      `    ${top.map(([owner, bytes]) => `${owner} ${kb(bytes)}`).join(', ')}\n`,
  );
}
const over = rows.filter((row) => row.bytes >= BUDGET_BYTES);
process.stdout.write(`${rows.length} bundles, ${over.length} at or over ${kb(BUDGET_BYTES)}\n`);
process.stdout.write(
  `import CPU time in a fresh process (median of ${RUNS}, in turns with the floor: an empty module)\n`,
);
for (const row of imports) {
  process.stdout.write(
    `${row.handler.padEnd(42)} ${row.importMs.toFixed(1).padStart(6)} ms (${(row.importMs / row.floorMs).toFixed(1)}× floor ${row.floorMs.toFixed(1)} ms)  ` +
      `--enable-source-maps ${row.withSourceMapsMs.toFixed(1).padStart(6)} ms (+${((row.withSourceMapsMs / row.importMs - 1) * 100).toFixed(0)}%)\n`,
  );
}
rmSync(dir, { recursive: true, force: true });

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/bundle-sizes.json',
  JSON.stringify(
    {
      at: new Date().toISOString(),
      node: process.version,
      budgetBytes: BUDGET_BYTES,
      functions: rows,
      imports,
    },
    null,
    2,
  ),
);
process.stdout.write('results: bench/results/bundle-sizes.json\n');
