/**
 * `npm run bench:bundles`: every deployed function's bundle size against the 700 KB budget, with
 * its largest contributors (packages and project folders, by bytes in the minified bundle).
 * Results: bench/results/bundle-sizes.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { bundleFunction, deployedFunctions, ownerOf } from './function-bundle.ts';

const BUDGET_BYTES = 700 * 1024;
const TOP = Number(process.env.BENCH_TOP ?? 8);
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;

const rows = [];
for (const { handler, installedModules } of deployedFunctions()) {
  const bundle = await bundleFunction(handler, installedModules);
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

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/bundle-sizes.json',
  JSON.stringify({ at: new Date().toISOString(), budgetBytes: BUDGET_BYTES, functions: rows }, null, 2),
);
process.stdout.write('results: bench/results/bundle-sizes.json\n');
