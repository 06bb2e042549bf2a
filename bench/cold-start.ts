/**
 * `npm run bench:cold-start`: what a Lambda cold start pays before the first request, measured as
 * the time to import each function's bundle (built as the CDK construct builds it) in a fresh Node
 * process, as ratios to a floor measured in the same run: importing an empty module the same way.
 * Also: compiling the Request schema with ajv at run time, the work the build-time compilation
 * (lib/validation/generated) takes off every cold start. Results: bench/results/cold-start.json.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { routes } from '#lib/routes';
import { requestSchema } from '#lib/validation/schemas/request';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const handlers = [
  'schemas/validate-payload',
  'authorizer',
  'requests/create-request',
  'requests/get-request',
  'portal-accounts/filter-portal-accounts',
  'attachments/create-attachment',
  // Their assets (the OpenAPI document, Scalar's 4.3 MB script) are read at import, from beside the bundle.
  'docs/get-openapi-document',
  'docs/get-api-reference-script',
];
const dir = mkdtempSync(join(tmpdir(), 'cold-start-'));

const bundle = async (entry: string, outfile: string) => {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
    logLevel: 'error',
    // The run-time-compilation entry is written outside the project: resolve packages from ours.
    nodePaths: [join(process.cwd(), 'node_modules')],
  });
  return outfile;
};

/** Median import time, in a fresh process each run (what a new Lambda container does). */
const importTime = (file: string) => {
  const script = `const t = performance.now(); await import(${JSON.stringify(file)}); process.stdout.write(String(performance.now() - t));`;
  const samples = Array.from({ length: RUNS }, () =>
    Number(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        env: { ...process.env, TABLE_NAME: 't', BUCKET_NAME: 'b', AWS_REGION: 'us-east-1' },
      }),
    ),
  ).sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
};

const empty = join(dir, 'empty.mjs');
writeFileSync(empty, 'export const handler = async () => ({});\n');
const floor = importTime(empty);

const rows = [];
for (const handler of handlers) {
  const file = await bundle(`functions/${handler}.ts`, join(dir, `${handler.replaceAll('/', '-')}.mjs`));
  // As CDK ships them (the row's assets).
  const assets = routes.find((route) => route.handler === handler)?.assets ?? {};
  for (const [fileName, source] of Object.entries(assets)) copyFileSync(source, join(dir, fileName));
  const ms = importTime(file);
  rows.push({ handler, bytes: statSync(file).size, importMs: ms, ratio: ms / floor });
}

// The alternative to build-time compilation: ajv compiling the schema when the function starts.
const compileEntry = join(dir, 'compile-at-start.ts');
writeFileSync(
  compileEntry,
  `import { Ajv } from 'ajv';
import formats from '${process.cwd()}/lib/validation/formats.ts';
const requestSchema = ${JSON.stringify(requestSchema)};
const ajv = new Ajv({ allErrors: true, verbose: true, strictRequired: false });
for (const [name, check] of Object.entries(formats)) ajv.addFormat(name, check);
export const validate = ajv.compile(requestSchema);
`,
);
const compiled = await bundle(compileEntry, join(dir, 'compile-at-start.mjs'));
const runtimeCompile = { importMs: importTime(compiled), bytes: statSync(compiled).size };
const standalone = await bundle('lib/validation/validate.ts', join(dir, 'standalone.mjs'));
const buildTimeCompile = { importMs: importTime(standalone), bytes: statSync(standalone).size };

process.stdout.write(`floor (import an empty module in a fresh process): ${floor.toFixed(2)} ms\n`);
for (const r of rows) {
  process.stdout.write(
    `${r.handler.padEnd(42)} ${(r.bytes / 1024).toFixed(0).padStart(6)} KB  import ${r.importMs.toFixed(1).padStart(6)} ms (${r.ratio.toFixed(1)}× floor)\n`,
  );
}
process.stdout.write(
  `Request validator: compiled at build time ${buildTimeCompile.importMs.toFixed(1)} ms vs compiled at start ${runtimeCompile.importMs.toFixed(1)} ms (${(runtimeCompile.importMs / buildTimeCompile.importMs).toFixed(1)}×)\n`,
);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/cold-start.json',
  JSON.stringify(
    {
      at: new Date().toISOString(),
      node: process.version,
      runs: RUNS,
      floorMs: floor,
      handlers: rows,
      validator: { buildTimeCompile, runtimeCompile },
    },
    null,
    2,
  ),
);
process.stdout.write('results: bench/results/cold-start.json\n');
rmSync(dir, { recursive: true, force: true });
