import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { call } from '#test/support/api';

const run = promisify(execFile);

/** The real CLI in a child process, pointed at the test stack the way `npm start` points it at .local/. */
const stateDir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
writeFileSync(join(stateDir, 'stack.json'), JSON.stringify({ env: inject('stackEnv') }));
const admin = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env: { ...process.env, LOCAL_STATE_DIR: stateDir },
  });
  return JSON.parse(stdout);
};

describe('admin CLI (npm run admin -- …)', () => {
  it('provisions a client, organization and client user, and revokes a key', async () => {
    const client = await admin('create-client', 'CLI Partner');
    expect(Object.keys(client)).toEqual(['clientId', 'apiKey']);
    expect(client.apiKey).toMatch(/^srk_[A-Za-z0-9_-]{43}$/);
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey: client.apiKey })).status).toBe(200);

    const organization = await admin('create-organization', client.clientId, 'CLI Clinic');
    expect(Object.keys(organization)).toEqual(['organizationId']);
    const user = await admin('create-client-user', client.clientId, organization.organizationId, 'cli-user');
    expect(user).toMatchObject({ clientUserId: 'cli-user', organizationId: organization.organizationId });

    expect(await admin('revoke-api-key', client.apiKey)).toEqual({ revoked: true });
    expect((await call('GET', '/api/external/v1.1/Schemas', { apiKey: client.apiKey })).status).toBe(401);
  });

  it('fails with a JSON error and exit code 1 on bad input', async () => {
    const failure = await admin('create-organization', 'no-such-client', 'X').catch((error) => error);
    expect(failure.code).toBe(1);
    expect(JSON.parse(failure.stderr)).toEqual({ error: 'Unknown client no-such-client' });
    const unknown = await admin('revoke-api-key', 'srk_neverIssued').catch((error) => error);
    expect(JSON.parse(unknown.stderr)).toEqual({ error: 'Unknown API key' });
  });
});
