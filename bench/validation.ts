/**
 * `npm run bench:validation`: what a body full of errors costs, in process. Each body is ~250 KB
 * (just under MAX_JSON_BODY_BYTES) and is validated against Request and its errors formatted (the
 * Validation result a client gets), as a ratio to JSON.parse of the same text measured in the same
 * run. Also: the body parser's limits scan (lib/json/safe-json.ts) as a ratio to JSON.parse alone.
 * Goal: validation within 20× JSON.parse. Medians of fixed rounds; results: bench/results/validation.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { MAX_JSON_BODY_BYTES } from '#lib/http/endpoint';
import { parseJsonBody } from '#lib/json/safe-json';
import { validate } from '#lib/validation/validate';
import { minimalRequest, validRequest } from '#test/support/fixtures';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const GOAL = 20;
const TARGET_BYTES = 250 * 1024;

/** `prefix` + as many `item(i)`, comma-separated, as fit in TARGET_BYTES + `suffix`. */
const fill = (prefix: string, item: (i: number) => string, suffix: string) => {
  const items: string[] = [];
  let size = prefix.length + suffix.length;
  for (let i = 0; ; i++) {
    const next = item(i);
    if (size + next.length + 1 > TARGET_BYTES) break;
    items.push(next);
    size += next.length + 1;
  }
  return `${prefix}${items.join(',')}${suffix}`;
};

const request = JSON.stringify(minimalRequest('bench')).slice(0, -1);
const bodies: Record<string, string> = {
  'empty providers ({} × n)': fill(`${request},"renderingProviders":[`, () => '{}', ']}'),
  'invalid providers': fill(`${request},"renderingProviders":[`, () => '{"roleCode":"ZZ","npi":"1","x":1}', ']}'),
  'numbers as notes': fill(`${request},"providerNotes":[`, () => '1', ']}'),
  'unknown members': fill('{', (i) => `"m${i.toString(36)}":0`, '}'),
  'valid, large procedures': fill(
    `${JSON.stringify({ ...validRequest('bench'), procedures: undefined }).slice(0, -1)},"procedures":[`,
    (i) => `{"code":"7${i}","quantity":${i},"price":${i * 1.25},"note":"text"}`,
    ']}',
  ),
};
for (const text of Object.values(bodies)) {
  if (text.length > MAX_JSON_BODY_BYTES) throw new Error('A bench body exceeds MAX_JSON_BODY_BYTES');
}

const median = (fn: () => unknown) => {
  for (let i = 0; i < 3; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
};

const rows = Object.entries(bodies).map(([name, text]) => {
  const parsed = JSON.parse(text);
  const result = validate('Request', parsed);
  const parseMs = median(() => JSON.parse(text));
  const validateMs = median(() => validate('Request', parsed));
  const parseBodyMs = median(() => parseJsonBody(text));
  return {
    name,
    bytes: text.length,
    texts: result.errors.length,
    resultBytes: JSON.stringify(result).length,
    jsonParseMs: parseMs,
    validateAndFormatMs: validateMs,
    ratio: validateMs / parseMs,
    parseJsonBodyMs: parseBodyMs,
    parseJsonBodyRatio: parseBodyMs / parseMs,
  };
});

for (const r of rows) {
  process.stdout.write(
    `${r.name.padEnd(26)} ${(r.bytes / 1024).toFixed(0)} KB, ${String(r.texts).padStart(3)} texts (${r.resultBytes} B): ` +
      `validate + format ${r.validateAndFormatMs.toFixed(2).padStart(6)} ms = ${r.ratio.toFixed(1).padStart(4)}× JSON.parse ` +
      `(${r.jsonParseMs.toFixed(2)} ms); parseJsonBody ${r.parseJsonBodyRatio.toFixed(2)}× JSON.parse\n`,
  );
}
const worst = Math.max(...rows.map((r) => r.ratio));
process.stdout.write(
  `worst: ${worst.toFixed(1)}× JSON.parse (goal: within ${GOAL}×) ${worst <= GOAL ? 'met' : 'NOT met'}\n`,
);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/validation.json',
  JSON.stringify(
    { at: new Date().toISOString(), node: process.version, rounds: ROUNDS, goal: GOAL, worst, rows },
    null,
    2,
  ),
);
process.stdout.write('results: bench/results/validation.json\n');
