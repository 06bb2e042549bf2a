/**
 * `npm run bench:pas`: the status check of BENCH_REQUESTS (default 25) requests through each channel, end to end
 * on the local stack, on one machine, with ONE account and ONE connection:
 * - PAS: a check-auth-status batch of requests whose payer has a PAS endpoint and whose organization has an
 *   active connection to it (gateway → Step Functions stand-in → CheckPayerStatus → the payer token function →
 *   the local PAS payer's `Claim/$inquire`). The requests are submitted through the payer's API first, so each
 *   inquiry finds a claim (approved) to read, as a real re-check does;
 * - portal: the same batch on the sandbox portal's payer, through one portal account (the browser worker in
 *   real Chromium, one login), each request with an approved authorization on the portal.
 * Per batch: wall time from the start call to the batch's `finishedAt` (FinishBatch closing it), and where it
 * went; checks per minute from it. Per check, p50/p95 of each run's time from its `started` step to its last
 * step (the outcome): a percentile needs each request's own time, which the batch's wall time ÷ 25 (also
 * printed) averages away. The floors, measured in the same rounds, interleaved: the same inquiries in a row with
 * one token and nothing else (PAS), and the sandbox driver alone with one browser and one login (portal, as
 * bench/rpa-batch.ts). One batch of each channel first, not counted (warm-up); then BENCH_ROUNDS (default 5)
 * rounds; medians with min–max. The ratio PAS ÷ portal is taken round by round.
 * Results: bench/results/pas.json; docs/payer-api.md, "Speed", holds the figures.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startLocalStack } from '#local/stack';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 25);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** What the issue asks of the payer-API channel for one account: its checks per minute ÷ the portal's. */
const REQUIRED_RATIO = 50;
const PAS_PAYER_ID = 'BENCH-PAS';
const PAS_CONNECTION_ID = 'bench-pas';

process.env.LOG_LEVEL ??= 'warn';
// Every round's batches fit the client's hourly quota.
process.env.AUTOMATION_RUNS_PER_HOUR ??= '100000';
process.env.AUTOMATION_RUNS_PER_DAY ??= '100000';
const { sandboxSeed, SANDBOX_USERS, SANDBOX_SERVICE_FROM_DATE } = await import('#local/sandbox-portal/seed');
const portalIds = Array.from({ length: REQUESTS }, (_, i) => `BENCH-PORTAL-${i + 1}`);
const pasIds = Array.from({ length: REQUESTS }, (_, i) => `BENCH-PAS-${i + 1}`);
// The portal knows an approved authorization for each portal request, as the PAS payer will for each PAS one.
const portalAuthorizations = portalIds.map((reference, i) => ({
  memberId: 'SBX-10001',
  reference,
  status: 'approved' as const,
  fromDate: SANDBOX_SERVICE_FROM_DATE,
  number: `SBX-AUTH-B${String(i + 1).padStart(5, '0')}`,
  decisionDate: '2026-02-20',
}));
const stack = await startLocalStack({
  port: 0,
  sandboxPortal: { seed: { ...sandboxSeed, authorizations: [...sandboxSeed.authorizations, ...portalAuthorizations] } },
});
const { seedDemo } = await import('#local/seed');
const { requests } = await import('#lib/requests/service');
const demo = await seedDemo(stack.env.LOCAL_STATE_DIR!);

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(new URL(path, stack.baseUrl), {
    method,
    headers: { 'x-api-key': demo.apiKey, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The payer-API channel as local/pas-seed.ts sets it up: the payer's endpoint in the operators' directory, a
 * signing key for the client (the local keeper), the organization registered with the payer (its
 * operator's /register, with our JWKS URL) and its connection, created through the API.
 */
async function connectToPayer() {
  const { payerEndpointDirectory } = await import('#lib/payer-endpoints/payer-endpoints');
  const { dynamoPayerEndpointStore } = await import('#lib/payer-endpoints/dynamo-payer-endpoint-store');
  await payerEndpointDirectory({ store: dynamoPayerEndpointStore, urlPolicy: () => 'local' }).set({
    payerId: PAS_PAYER_ID,
    name: 'Bench Health Plan (PAS API)',
    fhirBaseUrl: stack.pasPayer.fhirBaseUrl,
    tokenUrl: stack.pasPayer.tokenUrl,
  });
  const { dynamoPayerKeySetStore } = await import('#lib/payer-api/signing-keys/dynamo-key-set-store');
  const { rotatePayerSigningKey } = await import('#lib/payer-api/signing-keys/rotation');
  const { keeperOf } = await import('#lib/payer-api/signing-keys/keepers');
  if (!(await dynamoPayerKeySetStore.ofClient(demo.clientId))) {
    await rotatePayerSigningKey({ store: dynamoPayerKeySetStore, keeper: keeperOf('local'), clientId: demo.clientId });
  }
  const { jwksPathOf, keySetIdOf } = await import('#lib/payer-api/signing-keys/key-set-id');
  const jwksUri = `${stack.baseUrl}${jwksPathOf(keySetIdOf(demo.clientId))}`;
  const registered = await fetch(`${stack.pasPayer.url}/register`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.pasPayer.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jwks_uri: jwksUri, client_name: 'Bench organization' }),
  });
  if (registered.status !== 201) throw new Error(`the payer's /register answered ${registered.status}`);
  const { client_id: payerClientId } = (await registered.json()) as { client_id: string };
  const connection = await api('POST', '/api/external/v1.1/Payers/connections', {
    externalId: PAS_CONNECTION_ID,
    clientUserId: demo.clientUserId,
    payerId: PAS_PAYER_ID,
    clientId: payerClientId,
  });
  if (connection.status !== 201) throw new Error(`connection: ${connection.status} ${JSON.stringify(connection.body)}`);
  if (connection.body.jwksUri !== jwksUri)
    throw new Error('the connection names another jwksUri than the one registered');
  return { payerClientId };
}

/** The run at `location` once it has ended. */
async function endedRun(location: string) {
  for (;;) {
    const run = (await api('GET', location)).body;
    if (run.status === 'succeeded' || run.status === 'failed') return run;
    await sleep(50);
  }
}

/** Each PAS request submitted through the payer's API, one after the other: the payer then knows its claim. */
async function submitAll() {
  for (const id of pasIds) {
    const start = await api('POST', `/api/external/v1.1/Requests/${id}/submit`, { clientUserId: demo.clientUserId });
    if (start.status !== 202) throw new Error(`submit ${id}: ${start.status} ${JSON.stringify(start.body)}`);
    const run = await endedRun(new URL(start.headers.get('location')!, stack.baseUrl).pathname);
    if (run.outcome !== 'submitted') throw new Error(`submit ${id} ended ${run.status} ${run.outcome}`);
  }
}

// One request document for both channels (the demo's approved one), each channel's payer in patient.PayerId.
const template = (await requests.get(demo.clientId, 'DEMO-APPROVED')).document as Record<string, unknown>;
const patient = template.patient as Record<string, unknown>;
for (const id of portalIds) await requests.upsert(demo.clientId, id, { ...template });
for (const id of pasIds) {
  const document = { ...template, requestTypeCode: 'HS', patient: { ...patient, PayerId: PAS_PAYER_ID } };
  await requests.upsert(demo.clientId, id, document);
}
const { payerClientId } = await connectToPayer();
await submitAll();

/**
 * DynamoDB commands by name since the last reset, counted on the SDK client the stack's handlers share: the
 * batch's own (its start, its tasks, the token function) and this bench's polls of its progress (two reads each,
 * every 100 ms).
 */
const { dynamoClient } = await import('#lib/aws/dynamodb');
let commands: Record<string, number> = {};
dynamoClient.middlewareStack.add(
  (next, context) => async (args) => {
    const name = context.commandName ?? 'unknown';
    commands[name] = (commands[name] ?? 0) + 1;
    return next(args);
  },
  { step: 'initialize', name: 'benchCommandCounter' },
);

type Steps = Array<{ at: string; step: string }>;
/** When a run's check started (its `started` step) and ended (its last step, the outcome), epoch ms. */
function checkSpan(run: Record<string, unknown>) {
  const steps = run.steps as Steps;
  const started = steps.find((step) => step.step === 'started');
  if (!started) throw new Error(`run ${String(run.runId)} has no started step`);
  return { from: Date.parse(started.at), to: Date.parse(steps.at(-1)!.at) };
}

/**
 * Where a batch's wall time went, from the runs' step times (the same clock: the stack runs in this
 * process): the start call, then until the first check started (the execution's start, the Map, a
 * browser's launch and login or a token), the checks from the first's start to the last's end, and the
 * rest (FinishBatch closing the batch).
 */
function phasesOf(t0: number, answeredAt: number, finishedAt: number, spans: Array<{ from: number; to: number }>) {
  const first = Math.min(...spans.map((span) => span.from));
  const last = Math.max(...spans.map((span) => span.to));
  return {
    startCall: answeredAt - t0,
    untilFirstCheck: first - answeredAt,
    checks: last - first,
    afterChecks: finishedAt - last,
  };
}

/** A batch's runs, each read through the API once the batch is done. */
const runsOf = (items: Array<{ requestExternalId: string; runId: string }>) =>
  Promise.all(
    items.map(
      async ({ requestExternalId, runId }) =>
        (await api('GET', `/api/external/v1/ServiceReviews/requests/${requestExternalId}/rpa/runs/${runId}`)).body,
    ),
  );

/**
 * One batch, end to end (from the start call to its `finishedAt`): its wall time and phases, each run's check
 * time, the outcomes, the DynamoDB calls and the portal logins.
 */
async function batch(ids: string[]) {
  const logins = stack.portal.loginAttempts(SANDBOX_USERS[0].username);
  commands = {};
  const t0 = Date.now();
  const start = await api('POST', '/api/external/v1/ServiceReviews/requests/rpa/batch/check-auth-status', {
    clientUserId: demo.clientUserId,
    requestExternalIds: ids,
  });
  const answeredAt = Date.now();
  if (start.status !== 202) throw new Error(`start answered ${start.status}: ${JSON.stringify(start.body)}`);
  const location = new URL(start.headers.get('location')!, stack.baseUrl).pathname;
  let progress: Record<string, unknown>;
  for (;;) {
    progress = (await api('GET', location)).body;
    if (progress.status === 'done') break;
    await sleep(100);
  }
  // The batch ended when FinishBatch closed it, not when this poll saw it: a faster poll would only take
  // the event loop from the stack, which runs in this process.
  const doneAt = Date.parse(progress.finishedAt as string);
  const dynamoCalls = { ...commands };
  const items = progress.items as Array<{ requestExternalId: string; runId: string; outcome: string }>;
  const spans = (await runsOf(items)).map(checkSpan);
  const outcomes = items.reduce<Record<string, number>>((counts, { outcome }) => {
    counts[outcome] = (counts[outcome] ?? 0) + 1;
    return counts;
  }, {});
  return {
    ms: doneAt - t0,
    phases: phasesOf(t0, answeredAt, doneAt, spans),
    checkMs: spans.map(({ from, to }) => to - from),
    outcomes,
    dynamoCalls,
    logins: stack.portal.loginAttempts(SANDBOX_USERS[0].username) - logins,
  };
}

// The floors: each channel's lookups alone, in a row, with nothing of ours around them.
const { launchBrowser, closeBrowser } = await import('#lib/portal/browser');
const { sandboxDriver } = await import('#lib/portal/drivers/sandbox');
/** The sandbox driver alone: one browser, one login, the same lookups in a row (bench/rpa-batch.ts's floor). */
async function portalFloor() {
  const user = SANDBOX_USERS[0];
  const started = performance.now();
  const browser = await launchBrowser();
  const session = await sandboxDriver.logIn(
    browser,
    { username: user.username, password: user.password, totpSecret: null },
    { baseUrl: stack.portal.url, timeoutMs: 30_000 },
  );
  const memberId = patient.memberId as string;
  for (const id of portalIds) {
    const answer = await session.readAuthorizationStatus({ memberId, requestExternalId: id });
    if (answer.status !== 'approved') throw new Error(`portal floor: ${id} read ${answer.status}`);
  }
  await session.close();
  await closeBrowser(browser);
  return { ms: performance.now() - started };
}

const { withToken } = await import('#lib/payer-api/smart/token-cache');
const { postFhirOperation } = await import('#lib/payer-api/pas-transport');
const { buildPasInquiryBundle } = await import('#lib/payer-api/pas/inquiry-bundle');
const { readPasAnswer } = await import('#lib/payer-api/pas/answer-reader');
const { dynamoRunStore } = await import('#lib/runs/dynamo-run-store');
/** Each PAS request as stored, with its submitted claim's identifier as CheckPayerStatus finds it (read once, here). */
const inquired = await Promise.all(
  pasIds.map(async (id) => {
    const runs = await dynamoRunStore.latestRuns(demo.clientId, id, 20);
    const submitted = runs.find((run) => run.kind === 'submit' && run.submission?.sentAt);
    return { request: await requests.get(demo.clientId, id), claimIdentifier: submitted!.submission!.bundleIdentifier };
  }),
);
let floorRound = 0;
/**
 * The PAS inquiries alone: one token (a connection id of its own per round, so each round asks one, as the
 * portal floor logs in once), then the same `Claim/$inquire` calls in a row, each answer read; no table, no
 * state machine, no token function.
 */
async function pasFloor() {
  const connection = {
    apiClientId: demo.clientId,
    connectionId: `bench-floor-${++floorRound}`,
    payerClientId,
    tokenUrl: stack.pasPayer.tokenUrl,
    scope: 'system/Claim.write system/ClaimResponse.read',
  };
  const started = performance.now();
  for (const { request, claimIdentifier } of inquired) {
    const bundle = buildPasInquiryBundle({
      request,
      bundleIdentifier: randomUUID(),
      inquiredAt: new Date().toISOString(),
      payer: { payerId: PAS_PAYER_ID, name: null },
      claimIdentifier,
      authorizationNumber: request.authorization.number,
    });
    const answer = await withToken(
      connection,
      (accessToken) =>
        postFhirOperation({
          baseUrl: stack.pasPayer.fhirBaseUrl,
          operation: 'Claim/$inquire',
          accessToken,
          body: bundle,
          policy: 'local',
        }),
      { policy: 'local' },
    );
    const read = readPasAnswer(answer.body);
    if (read.kind !== 'decision' || read.decision.status !== 'approved')
      throw new Error(`PAS floor: ${request.externalId} ${read.kind}`);
  }
  return { ms: performance.now() - started };
}

type Figures = Awaited<ReturnType<typeof batch>>;
const measured: { pas: Figures[]; portal: Figures[]; pasFloor: { ms: number }[]; portalFloor: { ms: number }[] } = {
  pas: [],
  portal: [],
  pasFloor: [],
  portalFloor: [],
};
const shapes = [
  async () => measured.pas.push(await batch(pasIds)),
  async () => measured.portal.push(await batch(portalIds)),
  async () => measured.pasFloor.push(await pasFloor()),
  async () => measured.portalFloor.push(await portalFloor()),
];
// Not counted: a batch of each first, which loads each channel's task modules and launches the warm browser
// (a cold start is bench:cold-start's to measure; this compares the channels' steady throughput).
await batch(pasIds);
await batch(portalIds);
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
/** The nearest-rank percentile. */
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const spread = (values: number[]) => ({
  median: +median(values).toFixed(2),
  min: +Math.min(...values).toFixed(2),
  max: +Math.max(...values).toFixed(2),
});
const perMinute = (ms: number) => (REQUESTS / ms) * 60_000;

function summary(runs: Figures[], floors: { ms: number }[]) {
  const checks = runs.flatMap((f) => f.checkMs);
  const floorMs = median(floors.map((f) => f.ms));
  return {
    ms: spread(runs.map((f) => f.ms)),
    /** Per request: from its run's `started` step to its outcome, over every round's runs. */
    checkMs: { p50: percentile(checks, 50), p95: percentile(checks, 95), max: Math.max(...checks) },
    /** Per request, amortized: the batch's wall time ÷ its requests. */
    wallMsPerCheck: spread(runs.map((f) => f.ms / REQUESTS)),
    checksPerMinute: spread(runs.map((f) => perMinute(f.ms))),
    timesTheFloor: spread(runs.map((f) => f.ms / floorMs)),
    phasesMs: {
      startCall: spread(runs.map((f) => f.phases.startCall)),
      untilFirstCheck: spread(runs.map((f) => f.phases.untilFirstCheck)),
      checks: spread(runs.map((f) => f.phases.checks)),
      afterChecks: spread(runs.map((f) => f.phases.afterChecks)),
    },
    logins: runs.map((f) => f.logins),
    /** DynamoDB commands per check, by name (the first round's; polls included). */
    dynamoCallsPerCheck: Object.fromEntries(
      Object.entries(runs[0]!.dynamoCalls).map(([name, count]) => [name, +(count / REQUESTS).toFixed(2)]),
    ),
    outcomes: runs.map((f) => f.outcomes),
    floor: { ms: spread(floors.map((f) => f.ms)), checksPerMinute: spread(floors.map((f) => perMinute(f.ms))) },
  };
}

const pas = summary(measured.pas, measured.pasFloor);
const portal = summary(measured.portal, measured.portalFloor);
/** Round by round (each round's two batches ran minutes apart at most), then the median of those ratios. */
const ratios = measured.pas.map((f, round) => measured.portal[round]!.ms / f.ms);
const ratio = spread(ratios);
const result = {
  requests: REQUESTS,
  rounds: ROUNDS,
  accounts: 1,
  connections: 1,
  pas,
  portal,
  pasOverPortalChecksPerMinute: ratio,
  floorRatio: +(portal.floor.ms.median / pas.floor.ms.median).toFixed(2),
  required: REQUIRED_RATIO,
  holds: ratio.median >= REQUIRED_RATIO,
};

const line = (name: string, s: ReturnType<typeof summary>) =>
  [
    `${name}: ${s.ms.median.toFixed(0)} ms per batch (${s.ms.min.toFixed(0)}–${s.ms.max.toFixed(0)}), ${s.checksPerMinute.median.toFixed(1)} checks/min (${s.checksPerMinute.min.toFixed(1)}–${s.checksPerMinute.max.toFixed(1)}), ${s.timesTheFloor.median}× its floor (${s.timesTheFloor.min}–${s.timesTheFloor.max})`,
    `  per check (each run's started step → its outcome, ${s.logins.length * REQUESTS} runs): p50 ${s.checkMs.p50} ms, p95 ${s.checkMs.p95} ms, max ${s.checkMs.max} ms; batch wall ÷ ${REQUESTS}: ${s.wallMsPerCheck.median.toFixed(1)} ms`,
    `  wall time (medians): start call ${s.phasesMs.startCall.median} ms, until the first check ${s.phasesMs.untilFirstCheck.median} ms, the checks ${s.phasesMs.checks.median} ms, after the last ${s.phasesMs.afterChecks.median} ms`,
    `  DynamoDB calls per check (polls included): ${Object.entries(s.dynamoCallsPerCheck)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ')}`,
    `  floor: ${s.floor.ms.median.toFixed(0)} ms (${s.floor.ms.min.toFixed(0)}–${s.floor.ms.max.toFixed(0)}), ${s.floor.checksPerMinute.median.toFixed(1)} checks/min; portal logins per batch ${s.logins.join('/')}; outcomes ${JSON.stringify(s.outcomes[0])}`,
  ].join('\n');
process.stdout.write(
  [
    `status checks of ${REQUESTS} requests, one account / one connection, ${ROUNDS} rounds, interleaved; medians (min–max)`,
    line('PAS    (payer API, $inquire)', pas),
    line('portal (sandbox, Chromium) ', portal),
    `PAS ÷ portal checks/min (round by round): ${ratio.median.toFixed(1)}× (${ratio.min.toFixed(1)}–${ratio.max.toFixed(1)}); floors alone: ${result.floorRatio}×`,
    `required ≥ ${REQUIRED_RATIO}× for one account (the median ratio): ${result.holds ? 'holds' : 'does NOT hold'}`,
    '',
  ].join('\n'),
);
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/pas.json', `${JSON.stringify(result, null, 2)}\n`);
