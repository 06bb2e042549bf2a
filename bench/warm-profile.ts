/**
 * `npm run bench:warm-profile`: where a warm call's time goes. get-request and create-request run in process with
 * the deployed variables (bench/lambda-environment.ts), as bench/run.ts runs them, under the inspector's sampling
 * profiler (50 µs) started after WARMUP calls; the self time of every sampled frame is summed per group (the
 * module or package it belongs to) and printed per call. The profiler inflates every figure alike: read them as
 * shares of the call, and time changes with bench/run.ts. The raw profile: bench/results/warm-<route>.cpuprofile
 * (Chrome DevTools, or `node --cpu-prof`'s viewers). Bounded: fixed call counts, loopback only.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { startLocalStack } from '#local/stack';
import { runAsDeployedInProcess, startXrayDaemon } from './lambda-environment.ts';
import { createRequestEvent, getRequestEvent } from './proxy-event.ts';

const CALLS = Number(process.env.BENCH_PROFILE_CALLS ?? 3000);
const WARMUP = 300;

const stack = await startLocalStack({ port: 0 });
const { dynamoTenantStore } = await import('#lib/tenancy/dynamo-tenant-store');
const { provisioning } = await import('#lib/tenancy/provisioning');
const { validRequest } = await import('#test/support/fixtures');
const { lambdaContext } = await import('#local/gateway/invoke');
const { clientId } = await provisioning(dynamoTenantStore).createClient('profile');
const daemon = await startXrayDaemon();
const lambda = runAsDeployedInProcess('profile', daemon.address);
delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
const getRequest = (await import('#functions/requests/get-request')).handler as (
  e: never,
  c: never,
) => Promise<unknown>;
const createRequest = (await import('#functions/requests/create-request')).handler as typeof getRequest;

const caller = { clientId, keyId: 'profile' };

const run = Date.now().toString(36);
const routes = {
  'create-request': (i: number) =>
    createRequest(
      createRequestEvent(caller, validRequest(`p-${run}-${i}`)) as never,
      lambdaContext('profile') as never,
    ),
  'get-request': (i: number) =>
    getRequest(getRequestEvent(caller, `p-${run}-${i % 200}`) as never, lambdaContext('profile') as never),
};

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The group a frame's self time is counted under: a package, a folder of ours, or Node's own. */
const groupOf = ({ url, functionName }: ProfileNode['callFrame']) => {
  if (!url) return `(${functionName || 'native'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return `${url} ${functionName}`;
  const ours = /\/(lib|functions|local|bench)\/(.+)$/.exec(url);
  return ours ? `${ours[1]}/${ours[2]}` : url;
};

const summarize = (profile: Profile, calls: number) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<string, number>();
  const functionUs = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame;
    const group = groupOf(frame);
    const us = profile.timeDeltas[i] ?? 0;
    selfUs.set(group, (selfUs.get(group) ?? 0) + us);
    const fn = `${group} ${frame.functionName || '(anonymous)'}:${frame.lineNumber + 1}`;
    functionUs.set(fn, (functionUs.get(fn) ?? 0) + us);
  });
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  return {
    totalUsPerCall: total / calls,
    groups: [...selfUs.entries()]
      .map(([group, us]) => ({ group, usPerCall: us / calls }))
      .sort((a, b) => b.usPerCall - a.usPerCall),
    functions: [...functionUs.entries()]
      .map(([fn, us]) => ({ fn, usPerCall: us / calls }))
      .sort((a, b) => b.usPerCall - a.usPerCall)
      .slice(0, 60),
  };
};

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 50 });
mkdirSync('bench/results', { recursive: true });
const summaries: Record<string, ReturnType<typeof summarize>> = {};
for (const [name, call] of Object.entries(routes)) {
  for (let i = 0; i < WARMUP; i++) {
    lambda.nextInvocation();
    await call(i);
  }
  await session.post('Profiler.start');
  for (let i = 0; i < CALLS; i++) {
    lambda.nextInvocation();
    await call(WARMUP + i);
  }
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
  writeFileSync(`bench/results/warm-${name}.cpuprofile`, JSON.stringify(profile));
  const summary = summarize(profile, CALLS);
  summaries[name] = summary;
  lambda.print(`\n${name}: ${summary.totalUsPerCall.toFixed(0)} µs sampled per call (${CALLS} calls)\n`);
  for (const { group, usPerCall } of summary.groups.slice(0, 40)) {
    lambda.print(`${usPerCall.toFixed(1).padStart(8)} µs  ${group}\n`);
  }
}
writeFileSync(
  'bench/results/warm-profile.json',
  JSON.stringify({ at: new Date().toISOString(), calls: CALLS, summaries }, null, 2),
);
session.disconnect();
await stack.close();
await daemon.close();
