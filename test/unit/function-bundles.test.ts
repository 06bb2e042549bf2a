import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import { SourceMap } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bundleFunction, deployedBuildOptions, type FunctionBundle, ownerOf } from '../../bench/function-bundle.ts';

/*
 * What a function's bundle (built as CDK builds it) holds: only the compiled validators its route
 * names, multipart parsing only where a route takes forms, no X-Ray SDK, no browser or Encryption SDK in the
 * recorders, no Encryption SDK in the browser workers; the SDK's credential chain replaced by the environment's, and no ESM import of node:http.
 * Contents, not sizes: bench:bundles measures those.
 */
const inputsOf = async (handler: string) => Object.keys((await bundleFunction(handler)).inputs);
const validatorsIn = (inputs: string[]) =>
  inputs.filter((input) => input.startsWith('lib/validation/generated/')).sort();
const multipartIn = (inputs: string[]) =>
  inputs.filter((input) => /lib\/http\/multipart\.ts|http-multipart-body-parser|@fastify\/busboy/.test(input));

/**
 * The packages (or project folders) of the static ESM imports of node:http in a bundle, found in its
 * code and traced to their source through its source map: each makes Node build that module's ESM
 * facade, which reads its lazy getters and so loads undici (docs/performance.md).
 */
const esmImportersOfHttp = ({ code, sourceMap }: FunctionBundle) => {
  const map = new SourceMap(JSON.parse(sourceMap));
  return code.split('\n').flatMap((line, lineNumber) =>
    [...line.matchAll(/\b(?:import|export)\s*(?:[^;"'()]*?\bfrom\s*)?["'](?:node:)?http["']/g)].map((found) => {
      const entry = map.findEntry(lineNumber, found.index);
      return 'originalSource' in entry
        ? ownerOf(entry.originalSource)
        : `index.mjs:${lineNumber + 1}:${found.index + 1}`;
    }),
  );
};
describe('function bundles', () => {
  it('a route that validates no body bundles no validator and no multipart parser', async () => {
    const inputs = await inputsOf('requests/get-request');
    expect(validatorsIn(inputs)).toEqual([]);
    expect(multipartIn(inputs)).toEqual([]);
  });

  it('traces its SDK calls without the X-Ray SDK (lib/observability/tracer.ts)', async () => {
    const inputs = await inputsOf('requests/get-request');
    expect(inputs).toContain('lib/observability/xray.ts');
    expect(inputs.filter((input) => /aws-xray-sdk|cls-hooked|powertools\/tracer|\/semver\//.test(input))).toEqual([]);
  });

  it("a JSON route bundles its own schema's validator only", async () => {
    const inputs = await inputsOf('requests/create-request');
    expect(validatorsIn(inputs)).toEqual(['lib/validation/generated/per-schema/request.ts']);
    expect(multipartIn(inputs)).toEqual([]);
  });

  it('the route that takes forms bundles the multipart parser and its JSON schema only', async () => {
    const inputs = await inputsOf('attachments/create-attachment');
    expect(validatorsIn(inputs)).toEqual(['lib/validation/generated/per-schema/presigned-upload.ts']);
    expect(multipartIn(inputs)).toContain('lib/http/multipart.ts');
  });

  it.each(['rpa/finish-batch', 'rpa/record-execution-ended', 'rpa/get-rpa-run'])(
    '%s (a recorder, or a read that fails a run left unended) bundles no browser and no Encryption SDK',
    async (handler) => {
      const inputs = await inputsOf(handler);
      expect(inputs).toContain('lib/rpa/execution-ended.ts');
      expect(inputs.filter((input) => /playwright-core|@sparticuz|@aws-crypto/.test(input))).toEqual([]);
    },
  );

  it('the browser workers bundle no Encryption SDK (they ask the run credentials function); it bundles no browser', async () => {
    const browser = ['@sparticuz/chromium', 'playwright-core'];
    const worker = Object.keys((await bundleFunction('rpa/fill-portal-form', browser)).inputs);
    expect(worker.filter((input) => /@aws-crypto|lib\/crypto\//.test(input))).toEqual([]);
    expect(worker).toContain('lib/rpa/lambda-credentials-source.ts');
    const credentials = await inputsOf('rpa/issue-run-credentials');
    expect(credentials.filter((input) => /playwright-core|@sparticuz|lib\/rpa\/(browser|drivers)/.test(input))).toEqual(
      [],
    );
    expect(credentials).toContain('lib/crypto/open.ts');
    expect(credentials.filter((input) => /@aws-crypto\/encrypt-node/.test(input))).toEqual([]);
  });

  it.each(['requests/get-request', 'requests/create-request'])(
    '%s reads credentials from the environment and imports node:http without ESM',
    async (handler) => {
      const bundle = await bundleFunction(handler);
      const inputs = Object.keys(bundle.inputs);
      expect(inputs).toContain('lib/aws/environment-credentials.ts');
      expect(
        inputs.filter((input) => /@aws-sdk\/(?:nested-clients|credential-provider-(?!env\/))/.test(input)),
      ).toEqual([]);
      expect(esmImportersOfHttp(bundle)).toEqual([]);
    },
  );
});

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
