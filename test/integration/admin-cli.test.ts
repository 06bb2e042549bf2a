import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { localKeyFile } from '#lib/crypto/key-sources';
import { encryptionContextOf, type SecretField } from '#lib/portal-accounts/credentials';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { openPortalCredentials } from '#lib/portal-accounts/open-credentials';
import { hashApiKey } from '#lib/tenancy/api-keys';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { call, newTenant, uniqueId } from '#test/support/api';
import { sealV1WithLocalKey } from '#test/support/legacy-envelope';

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

const failureOf = (...args: string[]) =>
  admin(...args).then(
    () => expect.unreachable(`${args[0]} should have failed`),
    (error) => ({ code: error.code, error: JSON.parse(error.stderr) }),
  );
const schemas = (apiKey: string) => call('GET', '/api/external/v1.1/Schemas', { apiKey });

describe('admin CLI (npm run admin -- …)', () => {
  it('provisions a client, organization and client user, and revokes a key by its id', async () => {
    const client = await admin('create-client', 'CLI Partner');
    expect(Object.keys(client)).toEqual(['clientId', 'keyId', 'apiKey']);
    expect(client.apiKey).toMatch(/^srk_[A-Za-z0-9_-]{43}$/);
    expect(client.keyId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await schemas(client.apiKey)).status).toBe(200);

    const organization = await admin('create-organization', client.clientId, 'CLI Clinic');
    expect(Object.keys(organization)).toEqual(['organizationId']);
    const user = await admin('create-client-user', client.clientId, organization.organizationId, 'cli-user');
    expect(user).toMatchObject({ clientUserId: 'cli-user', organizationId: organization.organizationId });

    expect(await admin('revoke-api-key', client.clientId, client.keyId)).toEqual({
      revoked: true,
      clientId: client.clientId,
      keyId: client.keyId,
      authorizerCacheFlushed: false,
      reason: expect.stringContaining('the local gateway cannot be flushed from here'),
    });
    expect((await schemas(client.apiKey)).status).toBe(401);
  });

  it('still revokes by the key itself, for a leaked key whose id is not at hand', async () => {
    const client = await admin('create-client', 'CLI Leaky Partner');
    expect(await admin('revoke-api-key', client.apiKey)).toMatchObject({
      revoked: true,
      clientId: client.clientId,
      keyId: client.keyId,
      authorizerCacheFlushed: false,
    });
    expect((await schemas(client.apiKey)).status).toBe(401);
  });

  it('creates expiring keys, and lists keys with their state but never the key or its hash', async () => {
    const before = Date.now();
    const client = await admin('create-client', 'CLI Expiring Partner', '--expires-in', '90d');
    expect(Object.keys(client)).toEqual(['clientId', 'keyId', 'apiKey', 'expiresAt']);
    const ninetyDays = 90 * 86_400_000;
    expect(Date.parse(client.expiresAt)).toBeGreaterThanOrEqual(before + ninetyDays);
    expect(Date.parse(client.expiresAt)).toBeLessThanOrEqual(Date.now() + ninetyDays);

    const rotated = await admin('create-api-key', client.clientId, '--expires-in=12h');
    expect(Date.parse(rotated.expiresAt) - Date.parse(client.expiresAt)).toBeLessThan(-80 * 86_400_000);
    const forever = await admin('create-api-key', client.clientId);
    expect(Object.keys(forever)).toEqual(['clientId', 'keyId', 'apiKey']);
    expect((await schemas(rotated.apiKey)).status).toBe(200);
    await admin('revoke-api-key', client.clientId, forever.keyId);

    const listed = await admin('list-api-keys', client.clientId);
    expect(listed.clientId).toBe(client.clientId);
    expect(listed.apiKeys).toHaveLength(3);
    const byId = Object.fromEntries(listed.apiKeys.map((key: { keyId: string }) => [key.keyId, key]));
    expect(byId[client.keyId]).toEqual({
      keyId: client.keyId,
      state: 'active',
      createdAt: expect.any(String),
      lastUsedAt: null,
      expiresAt: client.expiresAt,
      revokedAt: null,
      organizationId: null,
    });
    expect(byId[rotated.keyId]).toMatchObject({ state: 'active', lastUsedAt: expect.any(String) });
    expect(byId[forever.keyId]).toMatchObject({ state: 'revoked', expiresAt: null, revokedAt: expect.any(String) });

    const text = JSON.stringify(listed);
    for (const { apiKey } of [client, rotated, forever]) {
      expect(text).not.toContain(apiKey.slice(4));
      expect(text).not.toContain(hashApiKey(apiKey));
    }
    expect(text).not.toContain('keyHash');
  });

  it('lists an expired key as expired', async () => {
    const client = await admin('create-client', 'CLI Lapsed Partner');
    const apiKey = 'srk_cliLapsedKeyNeverHandedToAnyone0123456789';
    await dynamoTenantStore.putApiKey({
      keyHash: hashApiKey(apiKey),
      keyId: 'lapsed-key',
      clientId: client.clientId,
      createdAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-01-02T00:00:00.000Z',
    });
    const { apiKeys } = await admin('list-api-keys', client.clientId);
    expect(apiKeys.map((key: { keyId: string; state: string }) => [key.keyId, key.state])).toEqual([
      ['lapsed-key', 'expired'],
      [client.keyId, 'active'],
    ]);
  });

  it('fails with a JSON error and exit code 1 on bad input', async () => {
    expect(await failureOf('create-organization', 'no-such-client', 'X')).toEqual({
      code: 1,
      error: { error: 'Unknown client no-such-client' },
    });
    expect(await failureOf('revoke-api-key', 'srk_neverIssued')).toEqual({
      code: 1,
      error: { error: 'Unknown API key' },
    });
    expect(await failureOf('list-api-keys', 'no-such-client')).toEqual({
      code: 1,
      error: { error: 'Unknown client no-such-client' },
    });
  });

  it("refuses to revoke an unknown key id, or another client's key by its id", async () => {
    const [a, b] = [await admin('create-client', 'CLI Partner A'), await admin('create-client', 'CLI Partner B')];
    expect(await failureOf('revoke-api-key', a.clientId, 'no-such-key')).toEqual({
      code: 1,
      error: { error: `Unknown API key no-such-key of client ${a.clientId}` },
    });
    expect(await failureOf('revoke-api-key', a.clientId, b.keyId)).toEqual({
      code: 1,
      error: { error: `Unknown API key ${b.keyId} of client ${a.clientId}` },
    });
    expect((await schemas(b.apiKey)).status).toBe(200);
  });

  it('refuses a bad --expires-in before writing anything, and the option where it means nothing', async () => {
    for (const bad of ['0d', '1w']) {
      const failure = await failureOf('create-client', 'CLI Never Created', '--expires-in', bad);
      expect(failure.code).toBe(1);
      expect(failure.error.error).toMatch(
        /^--expires-in takes whole hours or days \(e\.g\. 12h, 90d\), from 1h to 365d/,
      );
    }
    const client = await admin('create-client', 'CLI Partner C');
    expect((await failureOf('create-api-key', client.clientId, '--expires-in', '400d')).code).toBe(1);
    expect((await admin('list-api-keys', client.clientId)).apiKeys).toHaveLength(1);
    expect((await failureOf('list-api-keys', client.clientId, '--expires-in', '1d')).error.error).toMatch(
      /^list-api-keys takes no --expires-in/,
    );
    expect((await failureOf('create-api-key', client.clientId, '--expires')).error.error).toMatch(
      /^Unknown option --expires\./,
    );
  });

  it('refuses a bad option with a clear error and the usage, before doing anything', async () => {
    const { clientId } = await admin('create-client', 'CLI Partner Options');
    const refusals: [string[], RegExp][] = [
      [['create-api-key', clientId, '--rat', '1'], /^Unknown option --rat\.\nUsage: npm run admin/],
      [['create-api-key', clientId, '-o', 'org'], /^Unknown option -o\.\nUsage: /],
      [['set-client-limits', clientId, '--default=yes'], /^--default takes no value\.\nUsage: /],
      [['set-client-limits', clientId, '--burst', '1', '--rate'], /^--rate takes a whole number\.\nUsage: /],
      [['create-api-key', clientId, '--expires-in'], /^--expires-in takes whole hours or days \(e\.g\. 12h, 90d\)/],
      // An option where a value should be is not taken for the value.
      [
        ['create-api-key', clientId, '--organization', '--expires-in', '1d'],
        /^--organization takes an organization id\./,
      ],
      [['reencrypt-portal-secrets', '--client='], /^--client takes a client id\./],
    ];
    for (const [args, error] of refusals) {
      const failure = await failureOf(...args);
      expect(failure.code, args.join(' ')).toBe(1);
      expect(failure.error.error, args.join(' ')).toMatch(error);
    }
    // Nothing was done: the client still has its one key, on the defaults.
    expect((await admin('list-api-keys', clientId)).apiKeys).toHaveLength(1);
    expect(await dynamoTenantStore.getClient(clientId)).not.toHaveProperty('rateLimit');

    const help = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', '--help']);
    expect(help.stdout).toMatch(/^Usage: npm run admin -- <command>\n/);
  });

  it('creates a key restricted to one organization, shown by list-api-keys; an unknown organization is refused', async () => {
    const client = await admin('create-client', 'CLI Partner D');
    const { organizationId } = await admin('create-organization', client.clientId, 'CLI Clinic D');
    const restricted = await admin('create-api-key', client.clientId, '--organization', organizationId);
    expect(Object.keys(restricted)).toEqual(['clientId', 'keyId', 'apiKey', 'organizationId']);
    expect(restricted.organizationId).toBe(organizationId);
    expect((await schemas(restricted.apiKey)).status).toBe(200);
    expect((await dynamoTenantStore.findApiKey(hashApiKey(restricted.apiKey)))?.organizationId).toBe(organizationId);

    const expiring = await admin(
      'create-api-key',
      client.clientId,
      `--organization=${organizationId}`,
      '--expires-in',
      '1d',
    );
    expect(expiring).toMatchObject({ organizationId, expiresAt: expect.any(String) });

    const { apiKeys } = await admin('list-api-keys', client.clientId);
    const byId = Object.fromEntries(apiKeys.map((key: { keyId: string }) => [key.keyId, key]));
    expect(byId[client.keyId]).toMatchObject({ state: 'active', organizationId: null });
    expect(byId[restricted.keyId]).toMatchObject({ state: 'active', organizationId });
    expect(byId[expiring.keyId]).toMatchObject({ state: 'active', organizationId });

    expect(await failureOf('create-api-key', client.clientId, '--organization', 'no-such-org')).toEqual({
      code: 1,
      error: { error: `Unknown organization no-such-org of client ${client.clientId}` },
    });
    // Another client's organization is as unknown as a made-up one.
    const other = await admin('create-client', 'CLI Partner E');
    expect((await failureOf('create-api-key', other.clientId, '--organization', organizationId)).error.error).toBe(
      `Unknown organization ${organizationId} of client ${other.clientId}`,
    );
    expect((await admin('list-api-keys', other.clientId)).apiKeys).toHaveLength(1);
    expect((await failureOf('create-api-key', client.clientId, '--organization')).error.error).toMatch(
      /^--organization takes an organization id\./,
    );
    expect((await failureOf('list-api-keys', client.clientId, '--organization', organizationId)).error.error).toMatch(
      /^list-api-keys takes no --organization/,
    );
  });

  it('creates a client with its own limits, and sets and clears them later', async () => {
    const client = await admin(
      'create-client',
      'CLI Limited Partner',
      '--rate',
      '1',
      '--burst=1',
      '--quota-per-day',
      '5000',
    );
    expect(client).toMatchObject({ rateLimit: 1, burstLimit: 1, quotaPerDay: 5000 });
    expect(await dynamoTenantStore.getClient(client.clientId)).toMatchObject({
      rateLimit: 1,
      burstLimit: 1,
      quotaPerDay: 5000,
    });
    // One token: of two requests at once, one is throttled.
    const statuses = (await Promise.all([schemas(client.apiKey), schemas(client.apiKey)])).map((res) => res.status);
    expect(statuses.sort()).toEqual([200, 429]);

    expect(await admin('set-client-limits', client.clientId, '--rate', '200', '--burst', '400')).toEqual({
      clientId: client.clientId,
      rateLimit: 200,
      burstLimit: 400,
    });
    const stored = await dynamoTenantStore.getClient(client.clientId);
    expect(stored).toMatchObject({ rateLimit: 200, burstLimit: 400 });
    expect(stored?.quotaPerDay).toBeUndefined();

    expect(await admin('set-client-limits', client.clientId, '--default')).toEqual({ clientId: client.clientId });
    const cleared = await dynamoTenantStore.getClient(client.clientId);
    expect([cleared?.rateLimit, cleared?.burstLimit]).toEqual([undefined, undefined]);
  });

  it('refuses limits that are out of bounds, partial, malformed or for an unknown client', async () => {
    const { clientId } = await admin('create-client', 'CLI Bounded Partner');
    const refusals: [string[], string][] = [
      [['--rate', '0', '--burst', '10'], 'rateLimit must be a whole number from 1 to 10000.'],
      [['--rate', '10', '--burst', '5001'], 'burstLimit must be a whole number from 1 to 5000.'],
      [['--rate', '10'], 'A rate limit and a burst limit go together: give both.'],
      [['--quota-per-day', '10'], 'A daily quota needs a rate limit and a burst limit too.'],
    ];
    for (const [options, error] of refusals) {
      expect(await failureOf('set-client-limits', clientId, ...options), options.join(' ')).toEqual({
        code: 1,
        error: { error },
      });
    }
    const malformed = await failureOf('set-client-limits', clientId, '--rate', '1.5', '--burst', '2');
    expect(malformed.error.error).toMatch(/^--rate takes a whole number\./);
    expect((await failureOf('set-client-limits', clientId)).error.error).toMatch(
      /^set-client-limits takes --rate and --burst/,
    );
    expect((await failureOf('list-api-keys', clientId, '--rate', '1')).error.error).toMatch(
      /^list-api-keys takes no --rate/,
    );
    expect(await failureOf('set-client-limits', 'no-such-client', '--rate', '1', '--burst', '1')).toEqual({
      code: 1,
      error: { error: 'Unknown client no-such-client' },
    });
    expect((await failureOf('create-client', 'CLI Too Fast', '--rate', '20000', '--burst', '1')).error).toEqual({
      error: 'rateLimit must be a whole number from 1 to 10000.',
    });
  });

  it("sets and resets a client's storage quotas, refusing bad values and options", async () => {
    const { clientId } = await admin('create-client', 'CLI Storage Partner');
    expect(
      await admin(
        'set-storage-quotas',
        clientId,
        '--attachment-bytes',
        '1000000',
        '--portal-accounts-per-organization=5',
      ),
    ).toEqual({ clientId, attachmentBytesQuota: 1_000_000, portalAccountsQuota: 5 });
    expect(await dynamoTenantStore.getClient(clientId)).toMatchObject({
      attachmentBytesQuota: 1_000_000,
      portalAccountsQuota: 5,
    });
    // Replaces both: the one not given is back at its default.
    expect(await admin('set-storage-quotas', clientId, '--portal-accounts-per-organization', '7')).toEqual({
      clientId,
      portalAccountsQuota: 7,
    });
    expect(await dynamoTenantStore.getClient(clientId)).not.toHaveProperty('attachmentBytesQuota');
    expect(await admin('set-storage-quotas', clientId, '--default')).toEqual({ clientId });
    expect(await dynamoTenantStore.getClient(clientId)).not.toHaveProperty('portalAccountsQuota');

    expect((await failureOf('set-storage-quotas', clientId, '--portal-accounts-per-organization', '0')).error).toEqual({
      error: 'portalAccountsQuota must be a whole number from 1 to 1000000.',
    });
    expect((await failureOf('set-storage-quotas', clientId, '--attachment-bytes', '1e9')).error.error).toMatch(
      /^--attachment-bytes takes a whole number\./,
    );
    expect((await failureOf('set-storage-quotas', clientId)).error.error).toMatch(
      /^set-storage-quotas takes --attachment-bytes/,
    );
    expect((await failureOf('set-storage-quotas', clientId, '--rate', '1', '--burst', '1')).error.error).toMatch(
      /^set-storage-quotas takes no --rate/,
    );
    expect((await failureOf('set-client-limits', clientId, '--attachment-bytes', '1')).error.error).toMatch(
      /^set-client-limits takes no --attachment-bytes/,
    );
    expect(await failureOf('set-storage-quotas', 'no-such-client', '--attachment-bytes', '1')).toEqual({
      code: 1,
      error: { error: 'Unknown client no-such-client' },
    });
  });

  it("turns a client's scheduled re-checks off, on with its own interval, and back to the default", async () => {
    const { clientId } = await admin('create-client', 'CLI Recheck Partner');
    expect(await admin('set-rechecks', clientId, '--off')).toEqual({ clientId, rechecks: 'off' });
    expect(await dynamoTenantStore.getClient(clientId)).toMatchObject({ rechecks: 'off' });
    expect(await admin('set-rechecks', clientId, '--every-seconds', '7200')).toEqual({
      clientId,
      rechecks: 'on',
      recheckIntervalSeconds: 7200,
    });
    const on = await dynamoTenantStore.getClient(clientId);
    expect(on).toMatchObject({ recheckIntervalSeconds: 7200 });
    expect(on).not.toHaveProperty('rechecks');
    expect(await admin('set-rechecks', clientId, '--default')).toEqual({ clientId, rechecks: 'on' });
    expect(await dynamoTenantStore.getClient(clientId)).not.toHaveProperty('recheckIntervalSeconds');

    expect((await failureOf('set-rechecks', clientId, '--every-seconds', '60')).error).toEqual({
      error: 'The re-check interval must be a whole number of seconds from 300 to 86400.',
    });
    for (const args of [[], ['--off', '--every-seconds', '600'], ['--off', '--default']]) {
      expect((await failureOf('set-rechecks', clientId, ...args)).error.error).toMatch(
        /^set-rechecks takes one of --off, --every-seconds <n> or --default\./,
      );
    }
    expect((await failureOf('set-storage-quotas', clientId, '--off')).error.error).toMatch(
      /^set-storage-quotas takes no --off or --every-seconds/,
    );
    expect(await failureOf('set-rechecks', 'no-such-client', '--off')).toEqual({
      code: 1,
      error: { error: 'Unknown client no-such-client' },
    });
  });

  it('deletes a client: every key refused, no new key, its data kept; a second run answers the same and changes nothing', async () => {
    const tenant = await newTenant('departing');
    const externalId = uniqueId('acct');
    const account = await call('POST', '/api/external/v1.1/Portals/accounts', {
      apiKey: tenant.apiKey,
      body: {
        externalId,
        clientUserId: tenant.clientUserId,
        portalId: 'sandbox',
        username: 'front.desk',
        password: `pw-${uniqueId()}`,
        totpSecret: 'JBSWY3DPEHPK3PXP',
      },
    });
    expect(account.status, account.text).toBe(201);
    const restricted = await admin('create-api-key', tenant.clientId, '--organization', tenant.organizationId);
    const earlier = await admin('create-api-key', tenant.clientId);
    await admin('revoke-api-key', tenant.clientId, earlier.keyId);
    const { revokedAt: earlierRevokedAt } = (await dynamoTenantStore.findApiKey(hashApiKey(earlier.apiKey)))!;
    const staying = await admin('create-client', 'CLI Staying Partner');

    const deleted = await admin('delete-client', tenant.clientId);
    expect(deleted).toEqual({
      clientId: tenant.clientId,
      deletedAt: expect.any(String),
      revokedKeys: 2,
      usagePlanKeyDeleted: false,
      usagePlanDeleted: false,
      authorizerCacheFlushed: false,
      reason: expect.stringContaining('the local gateway cannot be flushed from here'),
    });
    for (const apiKey of [tenant.apiKey, restricted.apiKey]) expect((await schemas(apiKey)).status).toBe(401);
    expect((await schemas(staying.apiKey)).status).toBe(200);
    const { apiKeys } = await admin('list-api-keys', tenant.clientId);
    expect(apiKeys.map((key: { state: string }) => key.state)).toEqual(['revoked', 'revoked', 'revoked']);
    // A key revoked before keeps its own time; the others carry the deletion's.
    expect(apiKeys.map((key: { revokedAt: string }) => key.revokedAt).sort()).toEqual(
      [earlierRevokedAt, deleted.deletedAt, deleted.deletedAt].sort(),
    );
    expect(await failureOf('create-api-key', tenant.clientId)).toEqual({
      code: 1,
      error: { error: `Client ${tenant.clientId} is deleted: it gets no new API keys` },
    });

    // The data stays: removing it is the covered entity's decision, not offboarding's.
    const client = await dynamoTenantStore.getClient(tenant.clientId);
    expect(client).toMatchObject({ name: 'departing client', deletedAt: deleted.deletedAt });
    expect(await dynamoTenantStore.getOrganization(tenant.clientId, tenant.organizationId)).toBeDefined();
    expect(await dynamoTenantStore.getClientUser(tenant.clientId, tenant.clientUserId)).toBeDefined();
    expect(await dynamoPortalAccountStore.get(tenant.clientId, externalId)).toMatchObject({ externalId });

    const keysBefore = await dynamoTenantStore.listApiKeys(tenant.clientId);
    expect(await admin('delete-client', tenant.clientId)).toEqual(deleted);
    expect(await dynamoTenantStore.getClient(tenant.clientId)).toEqual(client);
    expect(await dynamoTenantStore.listApiKeys(tenant.clientId)).toEqual(keysBefore);
  });

  it('two runs at once answer the same: the first deletion time stands for the client and its keys', async () => {
    const client = await admin('create-client', 'CLI Twice Departing Partner');
    await admin('create-api-key', client.clientId);
    const [first, second] = await Promise.all([
      admin('delete-client', client.clientId),
      admin('delete-client', client.clientId),
    ]);
    expect(second).toEqual(first);
    expect(first.revokedKeys).toBe(2);
    expect((await dynamoTenantStore.getClient(client.clientId))?.deletedAt).toBe(first.deletedAt);
    const keys = await dynamoTenantStore.listApiKeys(client.clientId);
    expect(keys.map((key) => key.revokedAt)).toEqual([first.deletedAt, first.deletedAt]);
  });

  it('refuses to delete an unknown client, or without exactly one client id', async () => {
    expect(await failureOf('delete-client', 'no-such-client')).toEqual({
      code: 1,
      error: { error: 'Unknown client no-such-client' },
    });
    expect((await failureOf('delete-client')).error.error).toMatch(/^delete-client takes 1 argument\(s\)\./);
    expect((await failureOf('delete-client', 'a', 'b')).error.error).toMatch(/^delete-client takes 1 argument\(s\)\./);
  });

  it('attaches usage plan keys on AWS only: the local gateway throttles without one', async () => {
    const { clientId } = await admin('create-client', 'CLI Local Partner');
    expect(await failureOf('attach-usage-plan-key', clientId)).toEqual({
      code: 1,
      error: {
        error: 'attach-usage-plan-key needs ADMIN_TARGET=aws and USAGE_PLAN_ID (the local gateway needs no key).',
      },
    });
    expect(await dynamoTenantStore.getClient(clientId)).not.toHaveProperty('usageIdentifierKey');
  });
});

describe('reencrypt-portal-secrets', () => {
  it('re-seals v1 envelopes of one client as v2, leaves others and their versions alone, and is idempotent', async () => {
    const [tenant, other] = await Promise.all([newTenant('reseal'), newTenant('reseal-other')]);
    /** An account created through the API (v2), then given v1 envelopes as items of before the migration hold. */
    const accountWithV1 = async (owner: typeof tenant, secrets: { password: string; totpSecret: string }) => {
      const externalId = uniqueId('acct');
      const res = await call('POST', '/api/external/v1.1/Portals/accounts', {
        apiKey: owner.apiKey,
        body: { externalId, clientUserId: owner.clientUserId, portalId: 'sandbox', username: 'front.desk', ...secrets },
      });
      expect(res.status, res.text).toBe(201);
      const stored = (await dynamoPortalAccountStore.get(owner.clientId, externalId))!;
      const keyFile = localKeyFile(process.env, 'LOCAL_SECRETS_KEY_FILE', 'secrets.key')!;
      const seal = (field: SecretField) =>
        sealV1WithLocalKey(keyFile, secrets[field], encryptionContextOf(stored, field));
      await dynamoPortalAccountStore.update(
        { ...stored, password: seal('password'), totpSecret: seal('totpSecret') },
        stored.version,
      );
      return (await dynamoPortalAccountStore.get(owner.clientId, externalId))!;
    };
    const secrets = { password: `pw-${uniqueId()}`, totpSecret: 'JBSWY3DPEHPK3PXP' };
    const before = await accountWithV1(tenant, secrets);
    const untouched = await accountWithV1(other, secrets);
    expect(before.password.v).toBe(1);

    expect(await admin('reencrypt-portal-secrets', '--client', tenant.clientId)).toEqual({
      found: 1,
      resealed: 1,
      changedConcurrently: 0,
      failed: 0,
    });
    const after = (await dynamoPortalAccountStore.get(tenant.clientId, before.externalId))!;
    expect(after.password).toMatchObject({ v: 2, keyring: 'local' });
    expect(after.totpSecret).toMatchObject({ v: 2, keyring: 'local' });
    expect({ version: after.version, updatedAt: after.updatedAt }).toEqual({
      version: before.version,
      updatedAt: before.updatedAt,
    });
    expect(await openPortalCredentials(after)).toEqual({ username: 'front.desk', ...secrets });
    // The other client's account was not in scope.
    expect((await dynamoPortalAccountStore.get(other.clientId, untouched.externalId))!.password.v).toBe(1);

    expect(await admin('reencrypt-portal-secrets', '--client', tenant.clientId)).toEqual({
      found: 0,
      resealed: 0,
      changedConcurrently: 0,
      failed: 0,
    });
    expect((await failureOf('reencrypt-portal-secrets', '--client', 'no-such-client')).error).toEqual({
      error: 'Unknown client no-such-client',
    });
    expect((await failureOf('list-api-keys', tenant.clientId, '--client', tenant.clientId)).error.error).toMatch(
      /takes no --client/,
    );
  });
});
