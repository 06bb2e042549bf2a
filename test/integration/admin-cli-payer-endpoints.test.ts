import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { newTenant, uniqueId } from '#test/support/api';

/**
 * The payer endpoint directory through the real admin CLI (docs/payer-connections.md, "Payer
 * endpoints"), in a child process pointed at the test stack as `npm start` points it at .local/; and,
 * with ADMIN_TARGET=aws, at the same table under AWS's URL policy (https only).
 */
const run = promisify(execFile);
const stackEnv = inject('stackEnv');
const stateDir = mkdtempSync(join(tmpdir(), 'admin-cli-payers-'));
writeFileSync(join(stateDir, 'stack.json'), JSON.stringify({ env: stackEnv }));

const LOCAL = { LOCAL_STATE_DIR: stateDir };
/** The deployed target's variables, here naming the test stack's table and endpoints. */
const AWS = { ...stackEnv, ADMIN_TARGET: 'aws', WEBHOOK_URL_POLICY: 'local' };

const cli = async (env: Record<string, string | undefined>, args: string[]) => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env: { ...process.env, ...env },
  });
  return JSON.parse(stdout);
};
const admin = (...args: string[]) => cli(LOCAL, args);
const failure = (env: Record<string, string | undefined>, args: string[]) =>
  cli(env, args).then(
    () => expect.unreachable(`${args[0]} should have failed`),
    (error) => ({ code: error.code as number, error: JSON.parse(error.stderr).error as string }),
  );
const failureOf = (...args: string[]) => failure(LOCAL, args);

const newPayerId = () => uniqueId('CLI').toUpperCase();
const endpointArgs = (payerId: string, fhirBaseUrl: string, tokenUrl = 'https://payer.example/oauth2/token') => [
  'set-payer-endpoint',
  payerId,
  '--fhir-base-url',
  fhirBaseUrl,
  '--token-url',
  tokenUrl,
];

describe('set-payer-endpoint, list-payer-endpoints, delete-payer-endpoint', () => {
  it('creates, replaces whole, lists in payer-id order and deletes an endpoint; the store reads what was set', async () => {
    const payerId = newPayerId();
    const created = await admin(
      ...endpointArgs(payerId, 'https://payer.example/fhir/r4/'),
      '--name',
      'Example Health Plan',
      '--scope',
      'system/Claim.write  system/ClaimResponse.read system/Coverage.read',
      '--decision-timeframes',
      'none',
      '--attachment-submission',
      'cdex',
      '--subscriptions',
      'rest-hook',
    );
    expect(created).toEqual({
      payerId,
      name: 'Example Health Plan',
      fhirBaseUrl: 'https://payer.example/fhir/r4',
      tokenUrl: 'https://payer.example/oauth2/token',
      scope: 'system/Claim.write system/ClaimResponse.read system/Coverage.read',
      decisionTimeframes: 'none',
      attachmentSubmission: 'cdex',
      subscriptions: 'rest-hook',
      version: 1,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(await dynamoPayerEndpointStore.get(payerId)).toEqual(created);

    // Every field again: one not given is back at its default.
    const replaced = await admin(...endpointArgs(payerId, 'https://payer.example/fhir', 'https://payer.example/t?x=1'));
    expect(replaced).toEqual({
      ...created,
      name: null,
      fhirBaseUrl: 'https://payer.example/fhir',
      tokenUrl: 'https://payer.example/t?x=1',
      scope: 'system/Claim.write system/ClaimResponse.read',
      decisionTimeframes: 'cms-0057-f',
      attachmentSubmission: 'claim-update',
      subscriptions: 'none',
      version: 2,
      updatedAt: expect.any(String),
    });
    expect(replaced.updatedAt >= created.updatedAt).toBe(true);

    // Sorts before it: the list is in payer-id order (gsi1's sort key).
    const earlier = `A${payerId}`;
    await admin(...endpointArgs(earlier, 'https://earlier.example/fhir'));
    const { payerEndpoints } = await admin('list-payer-endpoints');
    const ours = payerEndpoints.filter((endpoint: { payerId: string }) =>
      [payerId, earlier].includes(endpoint.payerId),
    );
    expect(ours.map((endpoint: { payerId: string }) => endpoint.payerId)).toEqual([earlier, payerId]);
    expect(ours[1]).toEqual(replaced);

    expect(await admin('delete-payer-endpoint', payerId)).toEqual({ payerId, deleted: true });
    expect(await dynamoPayerEndpointStore.get(payerId)).toBeUndefined();
    const after = (await admin('list-payer-endpoints')).payerEndpoints.map((e: { payerId: string }) => e.payerId);
    expect(after).toContain(earlier);
    expect(after).not.toContain(payerId);
    expect(await failureOf('delete-payer-endpoint', payerId)).toEqual({
      code: 1,
      error: `No payer endpoint for ${payerId}.`,
    });
  });

  it('locally takes https anywhere and http on a loopback host only (every rule: test/unit/payer-endpoint-input.test.ts)', async () => {
    const local = 'http://127.0.0.1:4010/fhir';
    expect((await admin(...endpointArgs(newPayerId(), local, 'http://localhost:4010/auth/token'))).fhirBaseUrl).toBe(
      local,
    );
    expect(await failureOf(...endpointArgs(newPayerId(), 'http://payer.example/fhir'))).toEqual({
      code: 1,
      error: '--fhir-base-url must be https (or http on a loopback host).',
    });
    expect(await failureOf(...endpointArgs(newPayerId(), 'https://169.254.169.254/fhir'))).toEqual({
      code: 1,
      error: '--fhir-base-url must not name a metadata address.',
    });
  });

  it('on AWS takes https only, whatever the shell’s URL policy says', async () => {
    const payerId = newPayerId();
    expect(await failure(AWS, endpointArgs(payerId, 'http://127.0.0.1:4010/fhir'))).toEqual({
      code: 1,
      error: '--fhir-base-url must be https.',
    });
    expect(await failure(AWS, endpointArgs(payerId, 'https://localhost/fhir'))).toEqual({
      code: 1,
      error: '--fhir-base-url must not name a loopback address.',
    });
    expect(await cli(AWS, endpointArgs(payerId, 'https://payer.example/fhir'))).toMatchObject({ payerId, version: 1 });
  });

  it('checks the payer id, name and scopes, and refuses options that belong elsewhere, with exit code 1', async () => {
    const https = (payerId: string) => endpointArgs(payerId, 'https://payer.example/fhir');
    const cases: [string[], RegExp][] = [
      [https('bad payer'), /^A payer id is 1 to 80 characters: letters, digits and \. _ : -/],
      [[...https(newPayerId()), '--name', ' Padded '], /^--name takes 1 to 100 characters/],
      [[...https(newPayerId()), '--scope', 'patient/Claim.read'], /^--scope takes system\/ scopes/],
      [[...https(newPayerId()), '--scope='], /^--scope takes 1 to 20 space-separated scopes/],
      [[...https(newPayerId()), '--decision-timeframes', 'qhp'], /^--decision-timeframes takes cms-0057-f or none\./],
      [
        [...https(newPayerId()), '--attachment-submission', 'x12'],
        /^--attachment-submission takes claim-update or cdex\./,
      ],
      [
        ['list-payer-endpoints', '--decision-timeframes', 'none'],
        /^list-payer-endpoints takes no --fhir-base-url, --token-url, --name, --scope, --decision-timeframes, --subscriptions or --attachment-submission\./,
      ],
      [
        ['set-payer-endpoint', newPayerId(), '--fhir-base-url', 'https://payer.example/fhir'],
        /^set-payer-endpoint takes --fhir-base-url and --token-url\.\nUsage:/,
      ],
      [
        ['set-payer-endpoint', '--fhir-base-url', 'https://a.example', '--token-url', 'https://a.example/t'],
        /^set-payer-endpoint takes 1 argument\(s\)\.\nUsage:/,
      ],
      [['set-payer-endpoint', newPayerId(), '--fhir-base-url'], /^--fhir-base-url takes a URL\.\nUsage:/],
      [
        ['list-payer-endpoints', '--scope', 'system/Claim.write'],
        /^list-payer-endpoints takes no --fhir-base-url, --token-url, --name, --scope, --decision-timeframes, --subscriptions or --attachment-submission\.\nUsage:/,
      ],
      [['delete-payer-endpoint'], /^delete-payer-endpoint takes 1 argument\(s\)\.\nUsage:/],
      [[...https(newPayerId()), '--fhir-url', 'x'], /^Unknown option --fhir-url\.\nUsage:/],
    ];
    for (const [args, error] of cases) {
      const refused = await failureOf(...args);
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.error, args.join(' ')).toMatch(error);
    }
    const { payerEndpoints } = await admin('list-payer-endpoints');
    expect(payerEndpoints.map((endpoint: { payerId: string }) => endpoint.payerId)).not.toContain('bad payer');
  });
});

describe('set-storage-quotas --payer-connections-per-organization', () => {
  it('sets, replaces and clears the client’s own quota of payer connections per organization', async () => {
    const { clientId } = await newTenant('cli-payer-quota');
    expect(await admin('set-storage-quotas', clientId, '--payer-connections-per-organization', '5')).toEqual({
      clientId,
      payerConnectionsQuota: 5,
    });
    expect(await dynamoTenantStore.getClient(clientId)).toMatchObject({ payerConnectionsQuota: 5 });
    expect(await admin('set-storage-quotas', clientId, '--portal-accounts-per-organization', '7')).toEqual({
      clientId,
      portalAccountsQuota: 7,
    });
    expect(await dynamoTenantStore.getClient(clientId)).not.toHaveProperty('payerConnectionsQuota');
    expect(await failureOf('set-storage-quotas', clientId, '--payer-connections-per-organization', '0')).toEqual({
      code: 1,
      error: 'payerConnectionsQuota must be a whole number from 1 to 1000000.',
    });
  });
});
