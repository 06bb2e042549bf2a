/**
 * `npm run bench:cold-start`: what a Lambda cold start costs a user, per function: a fresh Node 22
 * process imports the function's deployed bundle (built with the CDK construct's own esbuild options
 * and NODE_OPTIONS, infra/constructs/service-function.ts) and invokes it once with a representative
 * event against the embedded emulators, seeded with what the event needs.
 *
 * Every process runs with the deployed function's variables (bench/lambda-environment.ts): metrics on,
 * tracing on (the subsegments go to a UDP socket this bench owns), the audit lines on stdout only.
 *
 * The floor of each function is a bundle built the same way that only imports and constructs the AWS
 * SDK clients its access needs (lib/routes/) and makes the same storage calls as the timed invocations
 * (recorded by a proxy in front of each emulator on a second discovery pass, and checked on every timed
 * invocation, the floor's and the peer's too). The typical peer (bench/typical-peer.ts) makes the same
 * calls through Middy and Powertools' Logger, Metrics and Tracer, built with NodejsFunction's default
 * bundling. Rounds interleave the three in rotating order; each figure is a median over the rounds, with
 * min–max; the processes' own CPU time beside it (less moved by the machine's other load than wall time).
 * Importing an empty module is printed as context only. Goals (printed, not enforced): every
 * function ≤ 1.25× its floor and faster than its peer, every bundle < 700 KB. Results:
 * bench/results/cold-start.json.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { BUNDLING, FUNCTION_NODE_OPTIONS } from '#infra/constructs/service-function';
import { AUDIT_MARKER } from '#lib/audit/audit-record';
import type { RouteAccess } from '#lib/routes/access-model';
import { startDynalite, startS3rver } from '#local/emulators';
import { ensureTable, localCredentials } from '#local/table';
import { deployedBuildOptions } from './function-bundle.ts';
import { lambdaEnvironment, localKeyFiles, startXrayDaemon, traceHeader } from './lambda-environment.ts';
import { type FloorParts, PEER_BUILD, peerSource } from './typical-peer.ts';

const ROUNDS = Math.max(5, Number(process.env.BENCH_ROUNDS ?? 7));
/** validate-payload makes no storage call: its floor is an empty module, so only the peer and the size apply. */
const GOALS = { ratio: 1.25, noFloor: ['schemas/validate-payload'], kb: 700 };
const run = Date.now().toString(36);
const auditMarker = `"${AUDIT_MARKER.field}":"${AUDIT_MARKER.value}"`;
const exec = promisify(execFile);

const workDir = resolve('node_modules/.cache/bench-cold-start');
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });

// --- Emulators, each behind a proxy that records the storage calls of the process being measured.
const stateDir = join(workDir, 'state');
const dynalite = await startDynalite({});
const daemon = await startXrayDaemon();
const s3rver = await startS3rver({ directory: join(stateDir, 's3'), buckets: ['service-review-attachments'] });

type Call = string;
const recorded = new Map<string, Call[]>();
let recording: string | undefined;
const recordingProxy = async (target: string, describe: (req: IncomingMessage, url: URL, body: Buffer) => Call) => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (recording) recorded.get(recording)?.push(describe(req, new URL(req.url!, target), body));
      const upstream = request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};
const dynamoProxy = await recordingProxy(dynalite.endpoint, (req, _url, body) => {
  const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? 'unknown';
  const indexed = operation === 'Query' && /"IndexName"/.test(body.toString('utf8'));
  return `dynamodb:${indexed ? 'QueryIndex' : operation}`;
});
const s3Proxy = await recordingProxy(s3rver.endpoint, ({ method }, url) => {
  const query = [...url.searchParams.keys()].filter((name) => !name.startsWith('X-Amz-') && name !== 'x-id');
  return `s3:${method}${query.length ? `?${query.sort().join('&')}` : ''}`;
});

const env: Record<string, string> = {
  ...localCredentials,
  TABLE_NAME: 'service-review',
  BUCKET_NAME: 'service-review-attachments',
  AWS_ENDPOINT_URL_DYNAMODB: dynamoProxy.endpoint,
  AWS_ENDPOINT_URL_S3: s3Proxy.endpoint,
  S3_FORCE_PATH_STYLE: 'true',
  LOCAL_STATE_DIR: stateDir,
};
Object.assign(process.env, env);
/**
 * What a process being measured runs with: the deployed function's variables (bench/lambda-environment.ts:
 * metrics, tracing to the bench's daemon, the audit lines on stdout only), the route's, the emulators', and
 * the local key files in place of KMS and Secrets Manager; no LOCAL_STATE_DIR (it would copy the audit lines to
 * a file). A fresh trace header per invocation, as the runtime gives it.
 */
const { LOCAL_STATE_DIR: _seedingOnly, ...routeEnv } = env;
const functionEnv = (fn: string) => ({
  ...routeEnv,
  ...localKeyFiles(stateDir),
  ...lambdaEnvironment(fn, daemon.address),
  _X_AMZN_TRACE_ID: traceHeader(),
});
await ensureTable(dynalite.endpoint, env.TABLE_NAME!);

// --- Seeding and events: the local gateway builds each event exactly as it hands it to a handler.
const { routes } = await import('#lib/routes/route-table');
const { authorizerAccess, routeAccess } = await import('#lib/routes/access-model');
const { automationEventFunctions, eventFunctions } = await import('#lib/routes/event-functions');
const { automationTasks, invokedFunctions } = await import('#lib/routes/automation-tasks');
const { createGateway } = await import('#local/gateway');
const { provisioning } = await import('#lib/tenancy/provisioning');
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { keys } = await import('#lib/object-keys');
const { s3 } = await import('#lib/aws/s3');
const { PutObjectCommand } = await import('@aws-sdk/client-s3');
const { validRequest } = await import('#test/support/fixtures');

const admin = provisioning(dynamoTenantStore);
const { clientId, apiKey } = await admin.createClient('cold-start bench');
const { organizationId } = await admin.createOrganization(clientId, 'cold-start bench');
await admin.createClientUser(clientId, organizationId, 'bench-user');

type Handler = (event: unknown, context: unknown) => Promise<unknown>;
let capture: ((module: string, event: unknown) => void) | undefined;
const realHandler = async (module: string): Promise<Handler> =>
  (await import(new URL(`../functions/${module}.ts`, import.meta.url).href)).handler;
const gateway = createGateway({
  routes,
  authorizerCacheTtlSeconds: 0,
  loadHandler: async (module) => {
    const real = await realHandler(module);
    return async (event, context) => {
      if (!capture) return real(event, context);
      capture(module, event);
      // The authorizer still answers, so the captured proxy event carries its context.
      return module === 'authorizer' ? real(event, context) : { statusCode: 200, body: '' };
    };
  },
});
await new Promise<void>((ready) => gateway.listen(0, '127.0.0.1', ready));
const gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/api/external`;
const send = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${gatewayUrl}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return text;
};
const accountBody = (externalId: string) => ({
  externalId,
  clientUserId: 'bench-user',
  portalId: 'sandbox',
  payerIds: ['SBX01'],
  displayName: 'Bench',
  username: 'bench@clinic.example',
  password: 'correct horse battery staple',
});
await send('POST', '/v1.1/Requests', validRequest('cold-get'));
await send('POST', '/v1.1/Portals/accounts', accountBody('cold-seed'));
await s3.send(new PutObjectCommand({ Bucket: env.BUCKET_NAME, Key: 'bench/floor', Body: 'floor' }));

const pdf = Buffer.from('%PDF-1.4\n% cold-start bench\n%%EOF\n');
const presigned = { fileName: 'note.pdf', contentType: 'application/pdf', size: pdf.length };
const sha256 = createHash('sha256').update(pdf).digest('hex');

/** The events of one round (unique ids where the function creates). */
const eventsOf = async (round: string) => {
  const events = new Map<string, unknown>();
  capture = (module, event) => events.set(module, event);
  await send('POST', '/v1.1/Requests', validRequest(`cold-${run}-${round}`));
  await send('GET', '/v1.1/Requests/cold-get');
  await send('POST', '/v1.1/Portals/accounts/filter', { clientUserId: 'bench-user' });
  await send('POST', '/v1.1/Portals/accounts', accountBody(`cold-${run}-${round}`));
  await send('POST', '/v1.1/Requests/cold-get/Attachments', { ...presigned, sha256 });
  await send('POST', '/v1/ServiceReviews/requests/cold-get/rpa', { clientUserId: 'bench-user' });
  await send('POST', '/v1.1/Schemas/Request/validate', validRequest('v'));
  capture = undefined;
  return events;
};

/**
 * The S3 notification for an uploaded file: the object of the attachment the same round's
 * create-attachment declared (its answer names it), put where the presigned URL would have.
 */
const uploadedEvent = async (createAttachmentAnswer: string) => {
  const { attachmentId } = JSON.parse(JSON.parse(createAttachmentAnswer).body) as { attachmentId: string };
  const key = keys.attachmentObject(clientId, 'cold-get', attachmentId);
  await s3.send(new PutObjectCommand({ Bucket: env.BUCKET_NAME, Key: key, Body: pdf, ContentType: 'application/pdf' }));
  return {
    Records: [
      {
        eventVersion: '2.1',
        eventSource: 'aws:s3',
        eventName: 'ObjectCreated:Put',
        s3: { bucket: { name: env.BUCKET_NAME }, object: { key, size: pdf.length } },
      },
    ],
  };
};

/** Modules under functions/; in this order, since create-attachment's answer feeds verify-uploaded-attachment. */
const functions = [
  'authorizer',
  'requests/create-request',
  'requests/get-request',
  'portal-accounts/filter-portal-accounts',
  'portal-accounts/create-portal-account',
  'attachments/create-attachment',
  'attachments/verify-uploaded-attachment',
  'rpa/issue-rpa-access-token',
  'schemas/validate-payload',
];

// --- Bundles: the deployed build (service-function.ts), translated to esbuild's API as NodejsFunction does.
const target = deployedBuildOptions().target as string;
const bundle = async (entry: string, outdir: string) => {
  const outfile = join(outdir, BUNDLING.format === 'esm' ? 'index.mjs' : 'index.js');
  const result = await build({
    ...deployedBuildOptions(),
    entryPoints: [entry],
    outfile,
    metafile: true,
    logLevel: 'error',
  });
  const packages = new Set(
    Object.keys(result.metafile.inputs)
      .map((input) => /node_modules\/(@aws-sdk\/(?:client-[^/]+|lib-dynamodb|s3-request-presigner))\//.exec(input)?.[1])
      .filter((name): name is string => Boolean(name)),
  );
  return { file: outfile, bytes: statSync(outfile).size, packages };
};

/** The typical peer's bundle (bench/typical-peer.ts): CommonJS, so its folder says so, as a Lambda asset without package.json would. */
const bundlePeer = async (entry: string, outdir: string) => {
  const outfile = join(outdir, 'index.js');
  await build({ ...PEER_BUILD, entryPoints: [entry], outfile, logLevel: 'error' });
  writeFileSync(join(outdir, 'package.json'), '{ "type": "commonjs" }\n');
  return { file: outfile, bytes: statSync(outfile).size, packages: new Set<string>() };
};

/** A floor's source: the same SDK clients constructed as lib/aws/ does, and the same calls, in order. */
const CLIENTS: Record<string, { imports: string; construct: string }> = {
  '@aws-sdk/client-dynamodb': {
    imports: "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
    construct: 'const dynamoClient = new DynamoDBClient({});',
  },
  '@aws-sdk/lib-dynamodb': {
    imports:
      "import { BatchGetCommand, DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';",
    construct:
      'const dynamo = DynamoDBDocumentClient.from(dynamoClient, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });',
  },
  '@aws-sdk/client-s3': {
    imports:
      "import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectVersionsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';",
    construct: "const s3 = new S3Client({ forcePathStyle: process.env.S3_FORCE_PATH_STYLE === 'true' });",
  },
  '@aws-sdk/s3-request-presigner': {
    imports: "import { getSignedUrl } from '@aws-sdk/s3-request-presigner';",
    construct: '',
  },
  '@aws-sdk/client-kms': {
    imports: "import { KMSClient } from '@aws-sdk/client-kms';",
    construct: 'globalThis.kms = new KMSClient({});',
  },
  '@aws-sdk/client-secrets-manager': {
    imports: "import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';",
    construct: 'globalThis.secretsManager = new SecretsManagerClient({});',
  },
  '@aws-sdk/client-sfn': {
    imports: "import { SFNClient } from '@aws-sdk/client-sfn';",
    construct: 'globalThis.sfn = new SFNClient({});',
  },
  '@aws-sdk/client-lambda': {
    imports: "import { LambdaClient } from '@aws-sdk/client-lambda';",
    construct: 'globalThis.lambda = new LambdaClient({});',
  },
};
const { GSI1, TABLE_KEY } = await import('#lib/table');
const floorKey = (n: number) => `{ ${TABLE_KEY.partition}: 'BENCH#floor', ${TABLE_KEY.sort}: 'n${n}' }`;
const CALLS: Record<string, (n: number) => string> = {
  'dynamodb:GetItem': (n) => `await dynamo.send(new GetCommand({ TableName, Key: ${floorKey(n)} }));`,
  'dynamodb:PutItem': (n) =>
    `await dynamo.send(new PutCommand({ TableName, Item: { ...${floorKey(n)}, at: new Date().toISOString() } }));`,
  'dynamodb:UpdateItem': (n) =>
    `await dynamo.send(new UpdateCommand({ TableName, Key: ${floorKey(n)}, UpdateExpression: 'SET #a = :a', ExpressionAttributeNames: { '#a': 'at' }, ExpressionAttributeValues: { ':a': 1 } }));`,
  'dynamodb:DeleteItem': (n) => `await dynamo.send(new DeleteCommand({ TableName, Key: ${floorKey(n)} }));`,
  'dynamodb:Query': () =>
    `await dynamo.send(new QueryCommand({ TableName, KeyConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': '${TABLE_KEY.partition}' }, ExpressionAttributeValues: { ':p': 'BENCH#floor' } }));`,
  'dynamodb:QueryIndex': () =>
    `await dynamo.send(new QueryCommand({ TableName, IndexName: '${GSI1.name}', KeyConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': '${GSI1.partition}' }, ExpressionAttributeValues: { ':p': 'BENCH#floor' } }));`,
  'dynamodb:BatchGetItem': (n) =>
    `await dynamo.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: [${floorKey(n)}] } } }));`,
  'dynamodb:TransactWriteItems': (n) =>
    `await dynamo.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName, Item: ${floorKey(n)} } }] }));`,
  's3:GET': () =>
    "await (await s3.send(new GetObjectCommand({ Bucket, Key: 'bench/floor' }))).Body.transformToByteArray();",
  's3:HEAD': () => "await s3.send(new HeadObjectCommand({ Bucket, Key: 'bench/floor' }));",
  's3:PUT': () => "await s3.send(new PutObjectCommand({ Bucket, Key: 'bench/floor-written', Body: 'floor' }));",
  's3:DELETE': () => "await s3.send(new DeleteObjectCommand({ Bucket, Key: 'bench/floor-deleted' }));",
  's3:GET?versions': () => "await s3.send(new ListObjectVersionsCommand({ Bucket, Prefix: 'bench/floor-deleted' }));",
};
/**
 * The SDK packages a function needs by its access (lib/routes/): what a bare function with the
 * same permissions must load.
 */
const packagesOf = (access: RouteAccess): Set<string> => {
  const needed = new Set<string>();
  if (access.table) needed.add('@aws-sdk/client-dynamodb').add('@aws-sdk/lib-dynamodb');
  if (access.bucket?.length || access.screenshots?.length) needed.add('@aws-sdk/client-s3');
  if (access.bucket?.includes('presign')) needed.add('@aws-sdk/s3-request-presigner');
  if (access.secrets) needed.add('@aws-sdk/client-kms');
  if (access.cursors || access.rpaTokens || access.requestFingerprints) needed.add('@aws-sdk/client-secrets-manager');
  if (access.automation) needed.add('@aws-sdk/client-sfn');
  if (access.invoke?.length) needed.add('@aws-sdk/client-lambda');
  return needed;
};
const accessOf = (handler: string): RouteAccess => {
  if (handler === 'authorizer') return authorizerAccess;
  const found = [
    ...routes.map((route) => ({ handler: route.handler, access: routeAccess[route.handler] })),
    ...eventFunctions,
    ...automationTasks,
    ...automationEventFunctions,
    ...invokedFunctions,
  ].find((row) => row.handler === handler);
  if (!found) throw new Error(`${handler} is in no route table row`);
  return found.access;
};

/** A floor's parts: the SDK clients' imports and constructions (in CLIENTS' order) and the calls, in order. */
const floorParts = (packages: Set<string>, calls: Call[]): FloorParts => {
  const unknown = [...packages].filter((name) => !CLIENTS[name]);
  if (unknown.length)
    throw new Error(`floor: no construction of ${unknown.join(', ')} yet (bench/cold-start.ts, CLIENTS)`);
  // In CLIENTS' order: the document client wraps the DynamoDB client.
  const used = Object.entries(CLIENTS)
    .filter(([name]) => packages.has(name))
    .map(([, client]) => client);
  const body = calls.map((call, n) => {
    const translate = CALLS[call];
    if (!translate) throw new Error(`floor: the call ${call} is not translated yet (bench/cold-start.ts, CALLS)`);
    return translate(n);
  });
  if (packages.has('@aws-sdk/s3-request-presigner')) {
    body.push(
      "await getSignedUrl(s3, new PutObjectCommand({ Bucket, Key: 'bench/floor-presigned' }), { expiresIn: 900 });",
    );
  }
  return {
    imports: used.map((client) => client.imports),
    constructs: used.map((client) => client.construct).filter(Boolean),
    body,
  };
};

const floorSource = ({ imports, constructs, body }: FloorParts) =>
  [
    ...imports,
    ...constructs,
    'const TableName = process.env.TABLE_NAME;',
    'const Bucket = process.env.BUCKET_NAME;',
    'export const handler = async () => {',
    ...body,
    "  return { statusCode: 200, body: '{}' };",
    '};',
  ].join('\n');

// --- Fresh processes: import, then one invocation, timed inside the process.
const runner = join(workDir, 'runner.mjs');
writeFileSync(
  runner,
  `import { readFileSync } from 'node:fs';
const [file, eventFile] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const context = { functionName: 'bench', awsRequestId: 'cold-start', getRemainingTimeInMillis: () => 29000 };
const cpuMs = (since) => { const used = process.cpuUsage(since); return (used.user + used.system) / 1000; };
const cpu = process.cpuUsage();
const started = performance.now();
const { handler } = await import(file);
const imported = performance.now();
const importCpuMs = cpuMs(cpu);
const result = await handler(event, context);
const done = performance.now();
const cpuTotalMs = cpuMs(cpu);
process.stdout.write('\\n@@result ' + JSON.stringify({ importMs: imported - started, invokeMs: done - imported, importCpuMs, cpuMs: cpuTotalMs, result: result ?? null }) + '\\n');
`,
);
const emptyModule = join(workDir, 'empty.mjs');
writeFileSync(emptyModule, 'export const handler = async () => ({ statusCode: 200, body: "{}" });\n');

interface Sample {
  importMs: number;
  invokeMs: number;
  totalMs: number;
  /**
   * The process's own CPU time (user + system) for the import and for import + invocation: on a shared
   * machine, less moved by other load than wall time, and without the emulators' work (this process's).
   */
  importCpuMs: number;
  cpuMs: number;
  answer: string;
  /** The storage calls the invocation made, recorded by the emulators' proxies. */
  calls: Call[];
  /** Its stdout lines: EMF metrics and audit records among them. */
  emfLines: number;
  auditLines: number;
}
const coldStart = async (file: string, event: unknown, fn: string): Promise<Sample> => {
  const eventFile = join(workDir, 'event.json');
  writeFileSync(eventFile, JSON.stringify(event));
  const label = `${fn}@${Math.random()}`;
  recorded.set(label, []);
  recording = label;
  try {
    const { stdout } = await exec(process.execPath, [runner, file, eventFile], {
      env: functionEnv(fn),
      maxBuffer: 16 * 1024 * 1024,
    });
    const lines = stdout.split('\n');
    const line = lines.find((candidate) => candidate.startsWith('@@result '));
    if (!line) throw new Error(`${file}: no result`);
    const { importMs, invokeMs, importCpuMs, cpuMs, result } = JSON.parse(line.slice('@@result '.length)) as {
      importMs: number;
      invokeMs: number;
      importCpuMs: number;
      cpuMs: number;
      result: { statusCode?: number } | null;
    };
    if (result?.statusCode !== undefined && result.statusCode >= 400) {
      throw new Error(`${file}: answered ${result.statusCode}: ${JSON.stringify(result)}`);
    }
    return {
      importMs,
      invokeMs,
      totalMs: importMs + invokeMs,
      importCpuMs,
      cpuMs,
      answer: JSON.stringify(result),
      calls: recorded.get(label)!,
      emfLines: lines.filter((candidate) => candidate.includes('"_aws":')).length,
      auditLines: lines.filter((candidate) => candidate.includes(auditMarker)).length,
    };
  } finally {
    recording = undefined;
    recorded.delete(label);
  }
};

/** Runs every function of one round in order; create-attachment's answer feeds verify-uploaded-attachment. */
const roundEvents = async (round: string) => {
  const events = await eventsOf(round);
  return {
    eventOf: async (fn: string, answers: Map<string, string>) =>
      fn === 'attachments/verify-uploaded-attachment'
        ? uploadedEvent(answers.get('attachments/create-attachment')!)
        : events.get(fn),
  };
};

process.stdout.write(`building ${functions.length} bundles and their floors (${BUNDLING.format}, ${target})…\n`);
const bundles = new Map<string, Awaited<ReturnType<typeof bundle>>>();
for (const fn of functions) {
  bundles.set(fn, await bundle(`functions/${fn}.ts`, join(workDir, 'functions', fn)));
}

/**
 * Discovery (not counted): every function twice, to warm the file cache and record the calls of an invocation
 * like the timed ones. The first can differ: the first upload of a request sweeps its slots (11 calls where
 * the later ones make 5). The floors and peers replay the second's calls; every timed invocation's calls are
 * checked against them.
 */
const discoveredCalls = new Map<string, Call[]>();
for (const pass of ['discovery-1', 'discovery-2']) {
  const discovery = await roundEvents(pass);
  const discoveryAnswers = new Map<string, string>();
  for (const fn of functions) {
    const sample = await coldStart(bundles.get(fn)!.file, await discovery.eventOf(fn, discoveryAnswers), fn);
    discoveryAnswers.set(fn, sample.answer);
    discoveredCalls.set(fn, sample.calls);
  }
}
const floors = new Map<string, Awaited<ReturnType<typeof bundle>>>();
const peers = new Map<string, Awaited<ReturnType<typeof bundle>>>();
const mismatches: string[] = [];
const sameCalls = (fn: string, who: string, calls: Call[]) => {
  const expected = discoveredCalls.get(fn)!.join(', ');
  if (calls.join(', ') !== expected) mismatches.push(`${fn} (${who}): ${calls.join(', ')}; expected ${expected}`);
};
for (const fn of functions) {
  const parts = floorParts(packagesOf(accessOf(fn)), discoveredCalls.get(fn)!);
  const floorEntry = join(workDir, 'floors', `${fn.replaceAll('/', '-')}.mjs`);
  const peerEntry = join(workDir, 'peers', `${fn.replaceAll('/', '-')}.mjs`);
  mkdirSync(join(workDir, 'floors'), { recursive: true });
  mkdirSync(join(workDir, 'peers'), { recursive: true });
  writeFileSync(floorEntry, floorSource(parts));
  writeFileSync(peerEntry, peerSource(parts));
  floors.set(fn, await bundle(floorEntry, join(workDir, 'floors', fn)));
  peers.set(fn, await bundlePeer(peerEntry, join(workDir, 'peers', fn)));
  sameCalls(fn, 'floor', (await coldStart(floors.get(fn)!.file, {}, fn)).calls);
  sameCalls(fn, 'peer', (await coldStart(peers.get(fn)!.file, {}, fn)).calls);
}

type Who = 'fn' | 'floor' | 'peer';
const samples = new Map<string, Record<Who, Sample[]>>(functions.map((fn) => [fn, { fn: [], floor: [], peer: [] }]));
const empty: Sample[] = [];
const ORDERS: Who[][] = [
  ['floor', 'fn', 'peer'],
  ['fn', 'peer', 'floor'],
  ['peer', 'floor', 'fn'],
];
for (let round = 0; round < ROUNDS; round++) {
  process.stdout.write(`round ${round + 1}/${ROUNDS}\n`);
  const { eventOf } = await roundEvents(String(round));
  const answers = new Map<string, string>();
  empty.push(await coldStart(emptyModule, {}, 'empty'));
  for (const fn of functions) {
    const slot = samples.get(fn)!;
    // Rotate the order, so none always runs right after another's process.
    for (const who of ORDERS[round % ORDERS.length]!) {
      const file = { fn: bundles, floor: floors, peer: peers }[who].get(fn)!.file;
      const sample = await coldStart(file, who === 'fn' ? await eventOf(fn, answers) : {}, fn);
      if (who === 'fn') answers.set(fn, sample.answer);
      sameCalls(fn, who, sample.calls);
      slot[who].push(sample);
    }
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const summary = (list: Sample[]) => ({
  medianMs: median(list.map((s) => s.totalMs)),
  minMs: Math.min(...list.map((s) => s.totalMs)),
  maxMs: Math.max(...list.map((s) => s.totalMs)),
  importMedianMs: median(list.map((s) => s.importMs)),
  invokeMedianMs: median(list.map((s) => s.invokeMs)),
  cpuMedianMs: median(list.map((s) => s.cpuMs)),
  cpuMinMs: Math.min(...list.map((s) => s.cpuMs)),
  cpuMaxMs: Math.max(...list.map((s) => s.cpuMs)),
  importCpuMedianMs: median(list.map((s) => s.importCpuMs)),
});

const rows = functions.map((fn) => {
  const { fn: fnSamples, floor: floorSamples, peer: peerSamples } = samples.get(fn)!;
  const measured = summary(fnSamples);
  const floor = summary(floorSamples);
  const peer = summary(peerSamples);
  const ratio = measured.medianMs / floor.medianMs;
  // Per-round ratios show the spread of the ratio itself.
  const roundRatios = fnSamples.map((s, i) => s.totalMs / floorSamples[i]!.totalMs);
  const peerRatios = fnSamples.map((s, i) => s.totalMs / peerSamples[i]!.totalMs);
  const cpuRatios = fnSamples.map((s, i) => s.cpuMs / floorSamples[i]!.cpuMs);
  const bundleBytes = bundles.get(fn)!.bytes;
  const goalRatio = GOALS.noFloor.includes(fn) ? Number.POSITIVE_INFINITY : GOALS.ratio;
  return {
    function: fn,
    bundleBytes,
    floorBundleBytes: floors.get(fn)!.bytes,
    peerBundleBytes: peers.get(fn)!.bytes,
    sdkPackagesInBundle: [...bundles.get(fn)!.packages].sort(),
    floorSdkPackages: [...packagesOf(accessOf(fn))].sort(),
    storageCalls: discoveredCalls.get(fn)!,
    stdoutPerInvocation: {
      emfLines: median(fnSamples.map((s) => s.emfLines)),
      auditLines: median(fnSamples.map((s) => s.auditLines)),
    },
    measured,
    floor,
    peer,
    ratio,
    ratioMin: Math.min(...roundRatios),
    ratioMax: Math.max(...roundRatios),
    peerRatio: measured.medianMs / peer.medianMs,
    cpuRatio: measured.cpuMedianMs / floor.cpuMedianMs,
    cpuRatioMin: Math.min(...cpuRatios),
    cpuRatioMax: Math.max(...cpuRatios),
    peerRatioMin: Math.min(...peerRatios),
    peerRatioMax: Math.max(...peerRatios),
    goals: {
      ratio: goalRatio,
      ratioMet: ratio <= goalRatio,
      peerMet: measured.medianMs < peer.medianMs,
      bundleKb: GOALS.kb,
      bundleMet: bundleBytes < GOALS.kb * 1024,
    },
  };
});
const emptySummary = summary(empty);

const ms = (value: number) => value.toFixed(1).padStart(6);
const spread = (s: ReturnType<typeof summary>) => `${ms(s.medianMs)} [${ms(s.minMs)}–${ms(s.maxMs)}]`;
process.stdout.write(
  `\nimport + first invocation in a fresh Node ${process.version} process with the deployed function's variables ` +
    `(metrics, tracing to a local daemon, audit on stdout), NODE_OPTIONS=${FUNCTION_NODE_OPTIONS || '(none)'}; ` +
    `median of ${ROUNDS} rounds [min–max]\ncontext: an empty module costs ${ms(emptySummary.medianMs)} ms; ` +
    `the X-Ray daemon got ${daemon.received()} subsegments in all\n\n`,
);
process.stdout.write(
  `${'function'.padEnd(40)} ${'bundle'.padStart(7)} ${'function ms'.padStart(22)} ${'floor ms'.padStart(22)} ${'typical peer ms'.padStart(22)}  ` +
    'vs floor [min–max]   vs peer [min–max]   goals\n',
);
for (const r of rows) {
  const floorGoal = Number.isFinite(r.goals.ratio)
    ? `${r.goals.ratioMet ? 'pass' : 'FAIL'} ≤ ${r.goals.ratio.toFixed(2)}×`
    : 'no floor (no call)';
  const goal = `${floorGoal}, ${r.goals.peerMet ? 'pass' : 'FAIL'} < peer, ${r.goals.bundleMet ? 'pass' : 'FAIL'} < ${GOALS.kb} KB`;
  process.stdout.write(
    `${r.function.padEnd(40)} ${`${(r.bundleBytes / 1024).toFixed(0)} KB`.padStart(7)} ` +
      `${spread(r.measured)} ${spread(r.floor)} ${spread(r.peer)}  ` +
      `${r.ratio.toFixed(2)}× [${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)}]  ` +
      `${r.peerRatio.toFixed(2)}× [${r.peerRatioMin.toFixed(2)}–${r.peerRatioMax.toFixed(2)}]  ${goal}\n`,
  );
}
for (const r of rows) {
  process.stdout.write(
    `  ${r.function}: import ${ms(r.measured.importMedianMs)} ms + first call ${ms(r.measured.invokeMedianMs)} ms; ` +
      `floor ${ms(r.floor.importMedianMs)} + ${ms(r.floor.invokeMedianMs)} ms; peer ${ms(r.peer.importMedianMs)} + ${ms(r.peer.invokeMedianMs)} ms ` +
      `(${(r.peerBundleBytes / 1024).toFixed(0)} KB, SDK external); EMF ${r.stdoutPerInvocation.emfLines}, audit ${r.stdoutPerInvocation.auditLines} lines; ` +
      `calls: ${r.storageCalls.join(', ') || 'none'}\n`,
  );
}
process.stdout.write('CPU time of the process (user + system), median [min–max], and per-round ratio to the floor:\n');
for (const r of rows) {
  process.stdout.write(
    `  ${r.function.padEnd(40)} ${ms(r.measured.cpuMedianMs)} [${ms(r.measured.cpuMinMs)}–${ms(r.measured.cpuMaxMs)}] ` +
      `(import ${ms(r.measured.importCpuMedianMs)})  floor ${ms(r.floor.cpuMedianMs)} (import ${ms(r.floor.importCpuMedianMs)})  ` +
      `${r.cpuRatio.toFixed(2)}× [${r.cpuRatioMin.toFixed(2)}–${r.cpuRatioMax.toFixed(2)}]\n`,
  );
}
const met = rows.filter((r) => r.goals.ratioMet && r.goals.peerMet && r.goals.bundleMet).length;
process.stdout.write(`goals met by ${met} of ${rows.length} functions (reported, not enforced)\n`);
process.stdout.write(`calls that differ from the floor's: ${mismatches.length ? mismatches.join('; ') : 'none'}\n`);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/cold-start.json',
  JSON.stringify(
    {
      at: new Date().toISOString(),
      node: process.version,
      rounds: ROUNDS,
      bundling: { ...BUNDLING, target, nodeOptions: FUNCTION_NODE_OPTIONS },
      goals: GOALS,
      emptyModule: emptySummary,
      xraySubsegments: daemon.received(),
      callMismatches: mismatches,
      functions: rows,
    },
    null,
    2,
  ),
);
process.stdout.write('results: bench/results/cold-start.json\n');

gateway.closeAllConnections();
await new Promise((done) => gateway.close(done));
for (const proxy of [dynamoProxy, s3Proxy]) {
  proxy.server.closeAllConnections();
  await new Promise((done) => proxy.server.close(done));
}
s3.destroy();
await s3rver.close();
await dynalite.close();
await daemon.close();
rmSync(workDir, { recursive: true, force: true });
