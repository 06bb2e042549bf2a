import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { seedDemo } from '#local/seed';
import { envVarsFor, envVarsOfStack, writeSamLocalTemplates } from '#scripts/env-vars';
import { builtFunction, CDK_OUT, invokeBuilt, synthesisIsStale, synthesize } from '#scripts/invoke';
import { EVENTS_DIR, type Expectation, INDEX_FILE } from '#scripts/sample-events';

/**
 * `npm run invoke`: every sample event of events/, in index order, through its function's built
 * bundle (cdk.out) in a fresh Node process, against the test stack seeded with the demo data as
 * `npm start` seeds it. cdk.out is synthesized once, here, when missing or stale.
 */
const index = JSON.parse(readFileSync(join(EVENTS_DIR, INDEX_FILE), 'utf8')) as Array<{
  file: string;
  functionId: string;
  expect: Expectation;
}>;
const envVars = envVarsOfStack(inject('stackEnv'));
let scratch: string;

beforeAll(async () => {
  if (synthesisIsStale()) synthesize();
  scratch = mkdtempSync(join(tmpdir(), 'invoke-test-'));
  await seedDemo(scratch);
}, 600_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A status when the result is a proxy response; otherwise the result itself. */
const outcomeOf = (result: unknown, expectation: Expectation) => {
  if ('statusCode' in expectation) return { statusCode: (result as { statusCode?: unknown }).statusCode };
  if ('errorMessage' in expectation) return { errorMessage: (result as { errorMessage?: unknown }).errorMessage };
  return { result };
};

describe('npm run invoke: every sample event through its built function', () => {
  for (const { file, functionId, expect: expectation } of index) {
    it(`${functionId} ${file} → ${JSON.stringify(expectation)}`, async () => {
      const fn = builtFunction(functionId);
      const { result, logs } = await invokeBuilt(fn, join(EVENTS_DIR, file), envVarsFor(envVars, functionId));
      expect(logs).toMatch(/^REPORT RequestId: \S+\tInit Duration: [\d.]+ ms\tDuration: [\d.]+ ms/m);
      if ('statusCode' in expectation && expectation.statusCode === 'not 5xx') {
        expect((result as { statusCode: number }).statusCode, JSON.stringify(result)).toBeLessThan(500);
      } else {
        expect(outcomeOf(result, expectation), JSON.stringify(result).slice(0, 500)).toEqual(expectation);
      }
    });
  }

  it('the CLI prints the result JSON on stdout and the REPORT line on stderr, as sam local invoke does', async () => {
    const envVarsFile = join(scratch, 'env-vars.json');
    writeFileSync(envVarsFile, JSON.stringify(envVars));
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'scripts/invoke.ts',
        'GetSchema',
        'events/get-schema.json',
        '--env-vars',
        envVarsFile,
        '--no-synth',
      ],
      { env: { ...process.env } },
    );
    const result = JSON.parse(stdout) as { statusCode: number; body: string };
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body)).toMatchObject({ title: expect.any(String) });
    expect(stderr).toMatch(/^REPORT RequestId: /m);
  });

  it('--docker: sam containers reach the host, and the sam-local template declares every variable to override', () => {
    const docker = envVarsOfStack(inject('stackEnv'), { docker: true }).Parameters!;
    expect(docker.AWS_ENDPOINT_URL_DYNAMODB).toMatch(/^http:\/\/host\.docker\.internal:\d+$/);
    expect(docker.SECRETS_KEY_ID).toBe('');
    const dir = mkdtempSync(join(scratch, 'cdk-out-'));
    // The API stack's template (the authorizer) and its Requests area's (the requests' route functions).
    const requests = readdirSync(CDK_OUT).find((file) =>
      /^ServiceReviewApiRequestsRoutes[0-9A-F]{8}\.nested\.template\.json$/.test(file),
    )!;
    for (const file of ['ServiceReviewApi.template.json', requests]) copyFileSync(join(CDK_OUT, file), join(dir, file));
    const samLocal = ['ServiceReviewApi.template.json', requests].map((file) =>
      join(dir, file.replace('.template.json', '.sam-local.template.json')),
    );
    expect(writeSamLocalTemplates(dir, Object.keys(docker)).sort()).toEqual([...samLocal].sort());
    const [api, area] = samLocal.map((file) => JSON.parse(readFileSync(file, 'utf8')));
    expect(Object.keys(api.Resources.AuthorizerFunction.Properties.Environment.Variables)).toEqual(
      expect.arrayContaining(Object.keys(docker)),
    );
    const variables = area.Resources.CreateRequestFunction.Properties.Environment.Variables;
    expect(Object.keys(variables)).toEqual(expect.arrayContaining(Object.keys(docker)));
    // What the template sets stays (sam's env-vars file overrides it).
    expect(variables.POWERTOOLS_LOG_LEVEL).toBe('INFO');
    expect(variables.TABLE_NAME).not.toBe('');
  });
});
