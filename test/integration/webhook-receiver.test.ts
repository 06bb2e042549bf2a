import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, newTenant } from '#test/support/api';
import { optionsFrom } from '../../scripts/webhook-receiver.ts';

/**
 * `npm run -s webhook-receiver` (scripts/webhook-receiver.ts) as a developer runs it: its own process
 * on loopback, subscribed through the API; the stack's delivery reaches it and it says whether the
 * signature verifies with the secret it was given.
 */
const webhooksPath = '/api/external/v1.1/Webhooks';
const children: ChildProcess[] = [];

/** Starts the receiver script; its URL once it says it listens, and everything it printed so far. */
const startScript = async (...args: string[]) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/webhook-receiver.ts', '--port', '0', ...args], {
    env: { ...process.env, WEBHOOK_SECRET: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const output = { text: '' };
  child.stdout!.on('data', (chunk: Buffer) => {
    output.text += chunk;
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output.text += chunk;
  });
  const until = Date.now() + 20_000;
  while (!/Receiving webhooks at (\S+)/.test(output.text)) {
    if (child.exitCode !== null || Date.now() > until) throw new Error(`the receiver did not start: ${output.text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: /Receiving webhooks at (\S+) /.exec(output.text)![1]!, output };
};

const printed = async (output: { text: string }, pattern: RegExp) => {
  const until = Date.now() + 15_000;
  while (!pattern.test(output.text)) {
    if (Date.now() > until) throw new Error(`never printed ${pattern}: ${output.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

let t: Awaited<ReturnType<typeof newTenant>>;
beforeAll(async () => {
  t = await newTenant('webhook-receiver');
});
afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
});

describe('npm run -s webhook-receiver', () => {
  it('prints a delivery and says its signature verifies with the secret given, or not with another', async () => {
    // The secret comes with the subscription, which needs the receiver's URL: started on a free port, subscribed,
    // then started again on that port with the secret, as a developer would.
    const good = await startScript();
    const created = await call('POST', webhooksPath, {
      apiKey: t.apiKey,
      body: { url: good.url, events: ['automation.batch_finished'] },
    });
    expect(created.status, created.text).toBe(201);
    children.pop()!.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const port = new URL(good.url).port;
    const checking = await startScript('--port', port, '--secret', created.body.secret);
    await call('POST', `${webhooksPath}/${created.body.id}/test`, { apiKey: t.apiKey });
    await printed(checking.output, /signature verified/);
    expect(checking.output.text).toMatch(/webhook-id: evt_[0-9a-f-]{36}/);
    expect(checking.output.text).toContain('"type": "webhook.test"');

    children.pop()!.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const wrong = await startScript('--port', port, '--secret', `whsec_${Buffer.alloc(32, 1).toString('base64')}`);
    await call('POST', `${webhooksPath}/${created.body.id}/test`, { apiKey: t.apiKey });
    await printed(wrong.output, /signature NOT verified: No matching signature found/);
  }, 60_000);

  it('reads its options from the command line and the environment, and refuses bad ones', () => {
    const secret = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
    expect(optionsFrom(['--port', '4100', '--status', '500'], { WEBHOOK_SECRET: secret })).toEqual({
      port: 4100,
      host: '127.0.0.1',
      secrets: [secret],
      status: 500,
    });
    expect(optionsFrom(['--secret', `${secret},${secret}`], {}).secrets).toHaveLength(2);
    expect(() => optionsFrom(['--port', 'x'], {})).toThrow(/--port/);
    expect(() => optionsFrom(['--secret', 'nope'], {})).toThrow(/whsec_/);
  });
});
