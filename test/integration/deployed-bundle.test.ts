import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deployedBuildOptions } from '../../bench/function-bundle.ts';

/*
 * A bundle built with the deployed options, imported in a fresh Node 22 process as Lambda does, with
 * only what Lambda hands a function: its role's credentials in the environment. Its DynamoDB call
 * goes through a proxy in front of the test stack's dynalite, which keeps the request's signature.
 */
describe('a deployed bundle in a fresh process', () => {
  const role = { keyId: 'ASIAROLEKEYFORTESTS', secret: 'role-secret-for-tests', sessionToken: 'role-session-token' };
  const stack = inject('stackEnv');
  const signed: IncomingHttpHeaders[] = [];
  const proxy = createServer((req, res) => {
    signed.push(req.headers);
    const upstream = request(
      new URL(req.url!, stack.AWS_ENDPOINT_URL_DYNAMODB),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  const dir = mkdtempSync(join(tmpdir(), 'deployed-bundle-'));
  const bundleFile = join(dir, 'index.mjs');
  const eventFile = join(dir, 'event.json');

  beforeAll(async () => {
    await new Promise<void>((ready) => proxy.listen(0, '127.0.0.1', ready));
    await build({
      ...deployedBuildOptions(),
      entryPoints: ['functions/requests/get-request.ts'],
      outfile: bundleFile,
      logLevel: 'error',
    });
    const event = JSON.parse(readFileSync('events/get-request.json', 'utf8'));
    event.pathParameters.externalId = 'NO-SUCH-REQUEST';
    writeFileSync(eventFile, JSON.stringify(event));
  });
  afterAll(async () => {
    await new Promise((closed) => proxy.close(closed));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Imports the bundle and invokes its handler once; the answer is the last line it prints. */
  const invokeBundle = async (credentials: Record<string, string>) => {
    const script = `const { handler } = await import(${JSON.stringify(bundleFile)});
const event = JSON.parse((await import('node:fs')).readFileSync(${JSON.stringify(eventFile)}, 'utf8'));
const answer = await handler(event, { awsRequestId: 'bundle-test', getRemainingTimeInMillis: () => 29_000 });
process.stdout.write('\\n' + JSON.stringify(answer));`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      env: {
        PATH: process.env.PATH,
        AWS_REGION: 'us-east-1',
        TABLE_NAME: stack.TABLE_NAME,
        BUCKET_NAME: stack.BUCKET_NAME,
        AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        LOCAL_AUDIT_FILE: join(dir, 'audit.jsonl'),
        ...credentials,
      },
    });
    const lines = stdout.trim().split('\n');
    return {
      answer: JSON.parse(lines.at(-1)!) as { statusCode: number },
      logs: [...lines.slice(0, -1), stderr].join('\n'),
    };
  };

  it("signs its call with the role's key and session token from the environment", async () => {
    signed.length = 0;
    const { answer } = await invokeBundle({
      AWS_ACCESS_KEY_ID: role.keyId,
      AWS_SECRET_ACCESS_KEY: role.secret,
      AWS_SESSION_TOKEN: role.sessionToken,
    });
    expect(answer.statusCode).toBe(404);
    expect(signed.length).toBeGreaterThan(0);
    for (const headers of signed) {
      expect(headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${role.keyId}/`));
      expect(headers['x-amz-security-token']).toBe(role.sessionToken);
    }
  });

  it('answers 500 without calling storage when the environment holds no credentials', async () => {
    signed.length = 0;
    const { answer, logs } = await invokeBundle({});
    expect(answer.statusCode).toBe(500);
    expect(signed).toEqual([]);
    expect(logs).toContain('"errorName":"CredentialsProviderError"');
  });
});
