import { randomBytes } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { SecretDecryptionError } from '#lib/crypto/keyring';
import { secretsKeyring } from '#lib/crypto/secrets-keyring';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { openPortalCredentials } from '#lib/portal-accounts/open-credentials';
import { expectConforming, newTenant, uniqueId } from '#test/support/api';
import { startInProcessGateway } from '#test/support/in-process-gateway';
import { captureProcessOutput } from '#test/support/output-capture';

/*
 * Proves that portal-account secrets never reach the table or the logs in clear text.
 * The shared local stack runs its handlers in vitest's global-setup process, whose output a test
 * worker cannot observe; so this file serves the same route table with the same handlers through
 * an in-process gateway (same emulators, same key file) and captures this process's stdout and
 * stderr while it drives every portal-account route, including failures.
 */
const v11 = '/api/external/v1.1/Portals/accounts';
const v1 = '/api/external/v1/Portals/accounts';

const base32 = (bytes: Buffer) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const byte of bytes) bits += byte.toString(2).padStart(8, '0');
  return (bits.match(/.{1,5}/g) ?? []).map((chunk) => alphabet[Number.parseInt(chunk.padEnd(5, '0'), 2)]).join('');
};

const totpBytes = randomBytes(20);
const secrets = {
  password: `pw-${randomBytes(12).toString('hex')}-Zq!`,
  newPassword: `pw2-${randomBytes(12).toString('hex')}`,
  totpSecret: base32(totpBytes),
  username: `portal.user.${randomBytes(6).toString('hex')}@clinic.example`,
  newUsername: `renamed.${randomBytes(6).toString('hex')}@clinic.example`,
};

/** base64 of `value` at each of the 3 byte alignments it could have inside a longer encoded blob. */
const base64Needles = (bytes: Buffer) =>
  [0, 1, 2].flatMap((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const inner = encoded.slice(Math.ceil((offset * 4) / 3) + 1, -4);
    return [inner, inner.replace(/\+/g, '-').replace(/\//g, '_')];
  });

/** The secret and every encoding of it worth looking for. */
const formsOf = (secret: string, raw: Buffer = Buffer.from(secret, 'utf8')) => [
  secret,
  secret.toLowerCase(),
  Buffer.from(secret, 'utf8').toString('hex'),
  raw.toString('hex'),
  raw.toString('hex').toUpperCase(),
  ...base64Needles(Buffer.from(secret, 'utf8')),
  ...base64Needles(raw),
];

const secretForms = [
  ...formsOf(secrets.password),
  ...formsOf(secrets.newPassword),
  ...formsOf(secrets.totpSecret, totpBytes),
];
const usernameForms = [...formsOf(secrets.username), ...formsOf(secrets.newUsername)];

let gateway: Awaited<ReturnType<typeof startInProcessGateway>> | undefined;
let baseUrl: string;
let capture: ReturnType<typeof captureProcessOutput> | undefined;
const output = () => capture?.text() ?? '';

beforeAll(async () => {
  // Every level, including debug: what must never be logged must not appear at any level.
  process.env.LOG_LEVEL = 'debug';
  gateway = await startInProcessGateway();
  baseUrl = gateway.baseUrl;
  capture = captureProcessOutput();
});

afterAll(async () => {
  capture?.restore();
  await gateway?.close();
});

const send = async (
  method: string,
  path: string,
  apiKey: string,
  body?: unknown,
  headers: Record<string, string> = {},
) => {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  await expectConforming(method, path, res, text);
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
};

const expectNone = (haystack: string, needles: string[], where: string) => {
  for (const needle of needles) expect(haystack.includes(needle), `${where} contains a form of a secret`).toBe(false);
};

describe('portal-account secrets at rest and in logs', () => {
  let externalId: string;
  let v1Id: string;
  let clientId: string;

  it('drives every route, including failures, through the in-process gateway', async () => {
    const tenant = await newTenant('portal-accounts-secrets');
    clientId = tenant.clientId;
    externalId = uniqueId('secret');
    v1Id = uniqueId('secret-v1');
    const account = {
      externalId,
      clientUserId: tenant.clientUserId,
      portalId: 'sandbox',
      displayName: 'Secrets test',
      username: secrets.username,
      password: secrets.password,
      totpSecret: secrets.totpSecret,
    };
    const created = await send('POST', v11, tenant.apiKey, account);
    expect(created.status, created.text).toBe(201);
    expect((await send('POST', v1, tenant.apiKey, { ...account, externalId: v1Id })).status).toBe(201);
    expect((await send('POST', v11, tenant.apiKey, account)).status).toBe(409);
    expect((await send('POST', v11, tenant.apiKey, { ...account, clientUserId: 'ghost' })).status).toBe(404);
    expect((await send('POST', v11, tenant.apiKey, { ...account, password: 12345678901 })).status).toBe(400);
    expect((await send('POST', v11, tenant.apiKey, `{"password":"${secrets.password}"`)).status).toBe(400);

    const read = await send('GET', `${v11}/${externalId}`, tenant.apiKey);
    expect(read.body.username).toBe(secrets.username); // returned to its owner...
    const { username: _returned, ...rest } = read.body;
    expectNone(JSON.stringify(rest), [...secretForms, ...usernameForms], 'the representation'); // ...and only there
    expectNone(read.text, secretForms, 'the response');

    const replacement = {
      clientUserId: tenant.clientUserId,
      portalId: 'sandbox',
      username: secrets.newUsername,
      password: secrets.newPassword,
    };
    expect((await send('PUT', `${v11}/${externalId}`, tenant.apiKey, replacement, { 'if-match': '"9"' })).status).toBe(
      412,
    );
    expect((await send('PUT', `${v11}/${externalId}`, tenant.apiKey, replacement)).status).toBe(200);
    expect((await send('PUT', `${v1}/${v1Id}`, tenant.apiKey, { ...replacement, totpSecret: null })).status).toBe(200);
    const listed = await send('GET', `${v11}/${tenant.clientUserId}/list`, tenant.apiKey);
    expect(listed.body.items).toHaveLength(2);
    expectNone(listed.text, secretForms, 'the list');
    const filtered = await send('POST', `${v11}/filter`, tenant.apiKey, {
      clientUserId: tenant.clientUserId,
      search: secrets.newUsername.slice(0, 12),
    });
    expect(filtered.body.items).toHaveLength(2);
    expectNone(filtered.text, secretForms, 'the filter result');
    expect((await send('DELETE', `${v1}/${v1Id}`, tenant.apiKey)).status).toBe(204);
  });

  it('logged the operations, by id only: no secret and no username in stdout or stderr', () => {
    expect(output()).toContain('"message":"Portal account created"');
    expect(output()).toContain('"message":"Portal account replaced"');
    expect(output()).toContain('"message":"Portal account deleted"');
    expect(output()).toContain(externalId);
    expectNone(output(), secretForms, 'the log output');
    expectNone(output(), usernameForms, 'the log output');
  });

  it('stored no secret in clear text anywhere in the table, only sealed envelopes that the RPA path can open', async () => {
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(new ScanCommand({ TableName: tableName(), ExclusiveStartKey }));
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    expectNone(JSON.stringify(items), secretForms, 'the table');

    const item = items.find((i) => i.entity === 'PortalAccount' && i.externalId === externalId)!;
    expect(item).toBeDefined();
    expect(Object.keys(item)).not.toContain('password');
    expect(Object.keys(item)).not.toContain('totpSecret');
    // Sealed by the Encryption SDK: the envelope is its message and nothing else.
    for (const envelope of [item.passwordEnvelope, item.totpSecretEnvelope]) {
      expect(Object.keys(envelope as object)).toEqual(['v', 'keyring', 'message']);
      expect(envelope).toMatchObject({ v: 2, keyring: 'local', message: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/) });
    }

    // The sealed values are the secrets: the RPA worker's decrypt path opens them with the stored context...
    const stored = (await dynamoPortalAccountStore.get(clientId, externalId))!;
    expect(await openPortalCredentials(stored, secretsKeyring())).toEqual({
      username: secrets.newUsername,
      password: secrets.newPassword,
      totpSecret: secrets.totpSecret,
    });
    // ...and nothing opens them under another tenant's context.
    await expect(
      openPortalCredentials({ ...stored, clientId: 'someone-else' }, secretsKeyring()),
    ).rejects.toBeInstanceOf(SecretDecryptionError);
  });
});
