/**
 * `npm run bench:rpa-batch`: a check-auth-status batch of BENCH_REQUESTS (default 20) requests on one
 * portal account, end to end on the local stack (gateway → Step Functions stand-in → browser worker →
 * sandbox portal in real Chromium): wall time from the start call to the batch's `done`, the logins
 * the portal saw, and runs per minute. The floor, measured in the same run: the sandbox driver alone,
 * one browser, one login, the same lookups one after the other (what the work costs without any
 * orchestration). Results: bench/results/rpa-batch.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '#local/stack';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20);

process.env.LOG_LEVEL ??= 'warn';
const stack = await startLocalStack({ port: 0 });
const { seedDemo } = await import('#local/seed');
const { requests } = await import('#lib/requests/service');
const { SANDBOX_USERS } = await import('#local/sandbox-portal/seed');
const demo = await seedDemo(stack.env.LOCAL_STATE_DIR!);
const template = (await requests.get(demo.clientId, 'DEMO-APPROVED')).document as Record<string, unknown>;
const ids = Array.from({ length: REQUESTS }, (_, i) => `BENCH-${i + 1}`);
for (const id of ids) await requests.upsert(demo.clientId, id, { ...template });

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(new URL(path, stack.baseUrl), {
    method,
    headers: { 'x-api-key': demo.apiKey, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
};

const username = SANDBOX_USERS[0].username;
const loginsBefore = stack.portal.loginAttempts(username);
const started = performance.now();
const start = await api('POST', '/api/external/v1/ServiceReviews/requests/rpa/batch/check-auth-status', {
  clientUserId: demo.clientUserId,
  requestExternalIds: ids,
});
if (start.status !== 202) throw new Error(`start answered ${start.status}: ${JSON.stringify(start.body)}`);
const location = new URL(start.headers.get('location')!, stack.baseUrl).pathname;
let progress: Record<string, unknown>;
for (;;) {
  progress = (await api('GET', location)).body;
  if (progress.status === 'done') break;
  await new Promise((resolve) => setTimeout(resolve, 200));
}
const batchMs = performance.now() - started;
const logins = stack.portal.loginAttempts(username) - loginsBefore;
const items = progress.items as Array<{ outcome: string }>;
const outcomes = items.reduce<Record<string, number>>((counts, { outcome }) => {
  counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}, {});

// The floor: the driver alone, one browser, one login, the same lookups in a row.
const { launchBrowser, closeBrowser } = await import('#lib/rpa/browser');
const { sandboxDriver } = await import('#lib/rpa/drivers/sandbox');
const user = SANDBOX_USERS[0];
const floorStarted = performance.now();
const browser = await launchBrowser();
const session = await sandboxDriver.logIn(
  browser,
  { username: user.username, password: user.password, totpSecret: null },
  { baseUrl: stack.portal.url, timeoutMs: 30_000 },
);
const memberId = (template.patient as { memberId: string }).memberId;
for (const id of ids) await session.readAuthorizationStatus({ memberId, requestExternalId: id });
await session.close();
await closeBrowser(browser);
const floorMs = performance.now() - floorStarted;
await stack.close();

const result = {
  requests: REQUESTS,
  batch: {
    ms: Math.round(batchMs),
    logins,
    runsPerMinute: +((REQUESTS / batchMs) * 60_000).toFixed(1),
    outcomes,
  },
  floor: { ms: Math.round(floorMs), logins: 1, runsPerMinute: +((REQUESTS / floorMs) * 60_000).toFixed(1) },
  ratio: +(batchMs / floorMs).toFixed(2),
};
process.stdout.write(
  [
    `batch of ${REQUESTS} on one account: ${result.batch.ms} ms, ${logins} logins, ${result.batch.runsPerMinute} runs/min`,
    `  outcomes: ${JSON.stringify(outcomes)}`,
    `floor (driver alone, 1 login, ${REQUESTS} lookups): ${result.floor.ms} ms, ${result.floor.runsPerMinute} runs/min`,
    `ratio: ${result.ratio}× the floor`,
    '',
  ].join('\n'),
);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/rpa-batch.json', `${JSON.stringify(result, null, 2)}\n`);
