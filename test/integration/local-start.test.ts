import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_THROTTLE } from '#lib/config/defaults';
import { dropTable } from '#local/table';
import { minimalRequest } from '#test/support/fixtures';
import { localStartProcess } from '#test/support/local-start-process';

/**
 * `npm start` as a newcomer runs it: its own process, its own state directory, its printed credentials.
 * Against an external DynamoDB (DYNAMODB_ENDPOINT) it gets a table of its own, dropped at the end, so
 * the test can run again on the same DynamoDB.
 */
const stateDir = mkdtempSync(join(tmpdir(), 'local-start-'));
const tableName = `local-start-test-${Date.now()}-${process.pid}`;
const demoKey = 'srk_localStartTestDemoKey_0123456789abcdefghij';
const { start, stop } = localStartProcess({ stateDir, demoKey, tableName, timeoutMs: 30_000 });

afterEach(stop);
afterAll(async () => {
  if (process.env.DYNAMODB_ENDPOINT) await dropTable(process.env.DYNAMODB_ENDPOINT, tableName);
});

const api = (baseUrl: string, method: string, path: string, body?: unknown) =>
  fetch(`${baseUrl}/api/external${path}`, {
    method,
    headers: { 'x-api-key': demoKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });

describe('npm start (the local stack as a user runs it)', () => {
  it('prints the base URL and demo credentials, seeds the demo tenant, keeps state across restarts, and starts clean on --clean', async () => {
    const first = await start();
    expect(first.output).toContain(`x-api-key:       ${demoKey}`);
    expect(first.output).toContain('client user id:  front-desk');
    expect(first.output).toMatch(/base URL:\s+http:\/\/127\.0\.0\.1:\d+\/api\/external/);
    // The local PAS payer runs beside the sandbox portal: the banner and .local/stack.json say where.
    const payerBase = /PAS payer:\s+(http:\/\/127\.0\.0\.1:\d+\/fhir) /.exec(first.output)?.[1];
    expect(first.output).toMatch(/payer operator:\s+http:\/\/127\.0\.0\.1:\d+\/operator\?token=[\w-]{43} /);
    const written = JSON.parse(readFileSync(join(stateDir, 'stack.json'), 'utf8'));
    expect(written.pasPayer).toMatchObject({
      fhirBaseUrl: payerBase,
      tokenUrl: payerBase!.replace('/fhir', '/auth/token'),
    });
    expect((await fetch(`${payerBase}/.well-known/smart-configuration`)).status).toBe(200);
    expect((await api(first.baseUrl, 'POST', '/v1.1/Requests', minimalRequest('persisted-1'))).status).toBe(201);

    // A second stack on the same state is refused with a clear message, not a crash.
    const second = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
      env: { ...process.env, PORT: '0', LOCAL_STATE_DIR: stateDir, LOCAL_TABLE_NAME: tableName },
    });
    let secondOutput = '';
    second.stderr.on('data', (chunk) => {
      secondOutput += chunk;
    });
    expect(await new Promise((resolve) => second.once('exit', resolve))).toBe(1);
    expect(secondOutput).toContain('already running');
    await stop();

    const restarted = await start();
    const kept = await api(restarted.baseUrl, 'GET', '/v1.1/Requests/persisted-1');
    expect(kept.status).toBe(200);
    await stop();

    const clean = await start('--clean');
    expect(clean.output).toContain('(started clean)');
    expect((await api(clean.baseUrl, 'GET', '/v1.1/Requests/persisted-1')).status).toBe(404);
  }, 90_000);

  it('throttles a client without its own limits as the deployed API does: its burst, then 429 with Retry-After', async () => {
    const { baseUrl } = await start();
    // Waves of concurrent calls until the first 429: the demo client has no limits of its own. A wave is
    // more than the burst, so that a machine too busy to serve 50 calls a second still spends the bucket.
    const statuses: number[] = [];
    let refused: Response | undefined;
    while (!refused && statuses.length < 600) {
      const wave = await Promise.all(Array.from({ length: 150 }, () => api(baseUrl, 'GET', '/v1.1/Schemas')));
      for (const res of wave) {
        statuses.push(res.status);
        if (res.status === 429 && !refused) refused = res;
        else await res.arrayBuffer();
      }
    }
    expect(refused, `no 429 in ${statuses.length} requests`).toBeDefined();
    // A few hundred at most, and never before the burst is spent (the bucket starts full). Calls of one wave
    // arrive in any order, so it is the count of those served that says so, not the first refusal's place.
    expect(statuses.indexOf(429)).toBeLessThan(600);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(
      DEFAULT_CLIENT_THROTTLE.burstLimit,
    );
    expect(new Set(statuses)).toEqual(new Set([200, 429]));
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect(refused!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused!.json()).toEqual({
      type: 'about:blank',
      title: 'Too Many Requests',
      status: 429,
      detail: 'The request rate limit was exceeded.',
    });
  }, 90_000);
});
