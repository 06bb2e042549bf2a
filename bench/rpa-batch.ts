/**
 * `npm run bench:rpa-batch`: check-auth-status batches of BENCH_REQUESTS (default 20) requests end to end on
 * the local stack (gateway → Step Functions stand-in → browser worker → sandbox portal in real Chromium),
 * in two shapes: all on one portal account, and spread over BENCH_ACCOUNTS (default 5) accounts. Per batch:
 * wall time from the start call to the batch's `done`, runs per minute, the logins the portal saw, the
 * Chromium launches, the browser tasks' time (their invocations' durations in the execution history: what
 * Lambda bills), the state transitions and the DynamoDB writes (counted on the SDK client). The floor,
 * measured in the same rounds, interleaved: the sandbox driver alone, one browser, one login, the same
 * lookups in a row (the work without any orchestration). BENCH_ROUNDS (default 3) rounds; medians with
 * min–max. Results: bench/results/rpa-batch.json; docs/rpa.md, "Throughput", holds the figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { GetExecutionHistoryCommand, ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import { startLocalStack } from '#local/stack';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The browser functions' memory (infra/automation-stack.ts). */
const BROWSER_GB = 2;

process.env.LOG_LEVEL ??= 'warn';
// Every round's batches fit the client's hourly quota.
process.env.AUTOMATION_RUNS_PER_HOUR ??= '100000';
process.env.AUTOMATION_RUNS_PER_DAY ??= '100000';
const { sandboxSeed, SANDBOX_USERS } = await import('#local/sandbox-portal/seed');
const benchUsers = Array.from({ length: ACCOUNTS }, (_, k) => ({
  username: `bench-user-${k + 1}`,
  password: `bench-password-${k + 1}`,
  totpSecret: null,
}));
const stack = await startLocalStack({
  port: 0,
  sandboxPortal: { seed: { ...sandboxSeed, users: [...sandboxSeed.users, ...benchUsers] } },
});
const { seedDemo } = await import('#local/seed');
const { requests } = await import('#lib/requests/service');
const { portalAccountsWithSecrets } = await import('#lib/portal-accounts/service-with-secrets');
const { dynamoClient } = await import('#lib/aws/dynamodb');
const { browserLaunches } = await import('#lib/portal/warm-browser');
const { ACCOUNTS_AT_ONCE } = await import('#lib/runs/state-machines');
const demo = await seedDemo(stack.env.LOCAL_STATE_DIR!);
const template = (await requests.get(demo.clientId, 'DEMO-APPROVED')).document as Record<string, unknown>;
const patient = template.patient as Record<string, unknown>;

// One account: the demo's (it serves the sandbox payer). Several: one payer per bench account.
const oneAccount = Array.from({ length: REQUESTS }, (_, i) => `BENCH-1-${i + 1}`);
for (const id of oneAccount) await requests.upsert(demo.clientId, id, { ...template });
for (const [k, user] of benchUsers.entries()) {
  await portalAccountsWithSecrets.create(
    { clientId: demo.clientId },
    {
      externalId: user.username,
      clientUserId: demo.clientUserId,
      portalId: 'sandbox',
      payerIds: [`BENCH-PAYER-${k + 1}`],
      username: user.username,
      password: user.password,
    },
  );
}
// One of those accounts' groups alone: what a group costs when it has an execution environment to itself.
const GROUP = Math.ceil(REQUESTS / ACCOUNTS);
const oneGroup = Array.from({ length: GROUP }, (_, i) => `BENCH-G-${i + 1}`);
for (const id of oneGroup) await requests.upsert(demo.clientId, id, { ...template });
const manyAccounts = Array.from({ length: REQUESTS }, (_, i) => `BENCH-N-${i + 1}`);
for (const [i, id] of manyAccounts.entries()) {
  const PayerId = `BENCH-PAYER-${(i % ACCOUNTS) + 1}`;
  await requests.upsert(demo.clientId, id, { ...template, patient: { ...patient, PayerId } });
}

/** DynamoDB writes (items: a transaction's count each) since the last reset. */
let writes = 0;
dynamoClient.middlewareStack.add(
  (next) => async (args) => {
    const request = args.request as { headers?: Record<string, string>; body?: string };
    const operation = request.headers?.['x-amz-target']?.split('.')[1] ?? '';
    if (['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation)) writes += 1;
    if (operation === 'TransactWriteItems') {
      const body = request.body as string | Uint8Array | undefined;
      const text = typeof body === 'string' ? body : Buffer.from(body ?? '{}').toString();
      writes += JSON.parse(text).TransactItems?.length ?? 0;
    }
    return next(args);
  },
  { step: 'build', name: 'benchWriteCounter' },
);

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(new URL(path, stack.baseUrl), {
    method,
    headers: { 'x-api-key': demo.apiKey, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
};

const sfn = new SFNClient({ endpoint: stack.stepFunctions.endpoint, region: 'us-east-1' });
const seenExecutions = new Set<string>();

/**
 * The batch's execution, from its history: the browser tasks' time (every invocation's end minus its
 * start, summed: parallel ones need no pairing; FinishBatch, the last, left out), their invocations, and
 * the state transitions (states entered: what Standard workflows bill).
 */
async function executionFigures() {
  const listed = await sfn.send(
    new ListExecutionsCommand({ stateMachineArn: stack.stepFunctions.stateMachineArns.checkAuthStatus }),
  );
  const fresh = (listed.executions ?? []).filter((execution) => !seenExecutions.has(execution.executionArn!));
  if (fresh.length !== 1) throw new Error(`expected one new execution, found ${fresh.length}`);
  const executionArn = fresh[0]!.executionArn!;
  seenExecutions.add(executionArn);
  const { events = [] } = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000 }));
  const at = (type: string) => events.filter((event) => event.type === type).map((e) => e.timestamp!.getTime());
  const started = at('LambdaFunctionStarted');
  const ended = [...at('LambdaFunctionSucceeded'), ...at('LambdaFunctionFailed'), ...at('LambdaFunctionTimedOut')];
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const lastStart = Math.max(...started);
  const lastEnd = Math.max(...ended);
  return {
    taskMs: sum(ended) - lastEnd - (sum(started) - lastStart),
    invocations: started.length - 1,
    transitions: events.filter((event) => event.type?.endsWith('StateEntered')).length,
  };
}

const loginsNow = () =>
  [...SANDBOX_USERS, ...benchUsers].reduce((total, user) => total + stack.portal.loginAttempts(user.username), 0);

/** One batch, end to end, and what it cost. */
async function batch(ids: string[]) {
  const logins = loginsNow();
  const launches = browserLaunches();
  writes = 0;
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
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ms = performance.now() - started;
  const outcomes = (progress.items as Array<{ outcome: string }>).reduce<Record<string, number>>(
    (counts, { outcome }) => {
      counts[outcome] = (counts[outcome] ?? 0) + 1;
      return counts;
    },
    {},
  );
  // Waited for: the execution's last state (FinishBatch) may still be recording.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return {
    ms,
    logins: loginsNow() - logins,
    launches: browserLaunches() - launches,
    writes,
    outcomes,
    ...(await executionFigures()),
  };
}

// The floor: the driver alone, one browser, one login, the same lookups in a row.
const { launchBrowser, closeBrowser } = await import('#lib/portal/browser');
const { sandboxDriver } = await import('#lib/portal/drivers/sandbox');
async function floor() {
  const user = SANDBOX_USERS[0];
  const started = performance.now();
  const browser = await launchBrowser();
  const session = await sandboxDriver.logIn(
    browser,
    { username: user.username, password: user.password, totpSecret: null },
    { baseUrl: stack.portal.url, timeoutMs: 30_000 },
  );
  const memberId = patient.memberId as string;
  for (const id of oneAccount) await session.readAuthorizationStatus({ memberId, requestExternalId: id });
  await session.close();
  await closeBrowser(browser);
  return { ms: performance.now() - started };
}

type Figures = Awaited<ReturnType<typeof batch>>;
const measured: { one: Figures[]; many: Figures[]; group: Figures[]; floor: { ms: number }[] } = {
  one: [],
  many: [],
  group: [],
  floor: [],
};
const shapes = [
  async () => measured.one.push(await batch(oneAccount)),
  async () => measured.many.push(await batch(manyAccounts)),
  async () => measured.group.push(await batch(oneGroup)),
  async () => measured.floor.push(await floor()),
];
for (let round = 0; round < ROUNDS; round++) {
  // Interleaved, each shape first in turn.
  for (let k = 0; k < shapes.length; k++) await shapes[(round + k) % shapes.length]!();
}
await stack.close();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const spread = (values: number[]) => ({
  median: +median(values).toFixed(2),
  min: +Math.min(...values).toFixed(2),
  max: +Math.max(...values).toFixed(2),
});

/**
 * us-east-1 list prices as docs/deploy.md states them ("Cost per million calls"): x86_64 Lambda (the browser
 * functions' architecture), Standard workflow state transitions, on-demand write units (every item written is
 * under 1 KB), S3 PUT. The worker's invocations plus the run credentials function's (one per login).
 */
const PRICE = {
  gbSecond: 0.0000166667,
  lambdaRequest: 0.2 / 1e6,
  transition: 0.000025,
  write: 0.625 / 1e6,
  /** A screenshot per check (S3 Standard PUT). */
  put: 0.005 / 1000,
};

/**
 * What a batch's wall time would be with each group in an execution environment of its own (on Lambda;
 * here the groups share the machine's cores and one browser): the one-account batch's orchestration (its
 * wall time minus its one task), plus, per wave of ACCOUNTS_AT_ONCE groups, the task time of one such group
 * measured alone (the `oneGroup` batch).
 */
function modeledLambdaMs(f: Figures) {
  const orchestration = median(measured.one.map((one) => one.ms - one.taskMs));
  const groupMs = median(measured.group.map((group) => group.taskMs));
  return orchestration + groupMs * Math.ceil(f.invocations / ACCOUNTS_AT_ONCE);
}

function summary(runs: Figures[], modeled: boolean) {
  const floorMs = median(measured.floor.map((f) => f.ms));
  const per = (pick: (f: Figures) => number) => spread(runs.map((f) => pick(f) / REQUESTS));
  const gbSecondsPerCheck = per((f) => (f.taskMs / 1000) * BROWSER_GB);
  const costPer1000 = per(
    (f) =>
      1000 *
      ((f.taskMs / 1000) * BROWSER_GB * PRICE.gbSecond +
        (f.invocations + f.logins) * PRICE.lambdaRequest +
        f.transitions * PRICE.transition +
        f.writes * PRICE.write +
        REQUESTS * PRICE.put),
  );
  return {
    ms: spread(runs.map((f) => f.ms)),
    runsPerMinute: spread(runs.map((f) => (REQUESTS / f.ms) * 60_000)),
    timesTheFloor: spread(runs.map((f) => f.ms / floorMs)),
    // One account is one group: its batch has nothing to run in parallel, on Lambda either.
    modeledLambdaRunsPerMinute: modeled ? spread(runs.map((f) => (REQUESTS / modeledLambdaMs(f)) * 60_000)) : undefined,
    logins: runs.map((f) => f.logins),
    launches: runs.map((f) => f.launches),
    invocations: runs.map((f) => f.invocations),
    transitionsPerCheck: per((f) => f.transitions),
    writesPerCheck: per((f) => f.writes),
    gbSecondsPerCheck,
    costPer1000,
    outcomes: runs.map((f) => f.outcomes),
  };
}

const result = {
  requests: REQUESTS,
  accounts: ACCOUNTS,
  rounds: ROUNDS,
  oneAccount: summary(measured.one, false),
  manyAccounts: summary(measured.many, true),
  oneGroup: {
    taskMs: spread(measured.group.map((f) => f.taskMs)),
    gbSecondsPerCheck: spread(measured.group.map((f) => ((f.taskMs / 1000) * BROWSER_GB) / GROUP)),
  },
  floor: {
    ms: spread(measured.floor.map((f) => f.ms)),
    runsPerMinute: spread(measured.floor.map((f) => (REQUESTS / f.ms) * 60_000)),
  },
};
const line = (name: string, s: ReturnType<typeof summary>) =>
  [
    `${name}: ${s.ms.median.toFixed(0)} ms (${s.ms.min.toFixed(0)}–${s.ms.max.toFixed(0)}), ${s.runsPerMinute.median.toFixed(1)} runs/min (${s.runsPerMinute.min.toFixed(1)}–${s.runsPerMinute.max.toFixed(1)}), ${s.timesTheFloor.median}× the floor (${s.timesTheFloor.min}–${s.timesTheFloor.max})`,
    ...(s.modeledLambdaRunsPerMinute
      ? [
          `  modeled with a Lambda environment per group (from medians): ${s.modeledLambdaRunsPerMinute.median.toFixed(1)} runs/min`,
        ]
      : []),
    `  logins ${s.logins.join('/')}, launches ${s.launches.join('/')}, invocations ${s.invocations.join('/')}; per check: ${s.gbSecondsPerCheck.median} GB-s (${s.gbSecondsPerCheck.min}–${s.gbSecondsPerCheck.max}), ${s.transitionsPerCheck.median} transitions, ${s.writesPerCheck.median} writes; $${s.costPer1000.median.toFixed(3)} per 1,000 checks (${s.costPer1000.min.toFixed(3)}–${s.costPer1000.max.toFixed(3)})`,
    `  outcomes: ${JSON.stringify(s.outcomes[0])}`,
  ].join('\n');
process.stdout.write(
  [
    `batches of ${REQUESTS} requests, ${ROUNDS} rounds, interleaved; medians (min–max)`,
    line('one account', result.oneAccount),
    line(`${ACCOUNTS} accounts`, result.manyAccounts),
    `one group of ${GROUP} alone: task ${result.oneGroup.taskMs.median.toFixed(0)} ms (${result.oneGroup.taskMs.min.toFixed(0)}–${result.oneGroup.taskMs.max.toFixed(0)}), ${result.oneGroup.gbSecondsPerCheck.median} GB-s per check (${result.oneGroup.gbSecondsPerCheck.min}–${result.oneGroup.gbSecondsPerCheck.max})`,
    `floor (driver alone, 1 login, ${REQUESTS} lookups): ${result.floor.ms.median.toFixed(0)} ms (${result.floor.ms.min.toFixed(0)}–${result.floor.ms.max.toFixed(0)}), ${result.floor.runsPerMinute.median.toFixed(1)} runs/min`,
    '',
  ].join('\n'),
);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/rpa-batch.json', `${JSON.stringify(result, null, 2)}\n`);
