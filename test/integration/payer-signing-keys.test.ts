import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { payerSigningKeySetEntity } from '#lib/entities/payer-signing-keys';
import { NoSigningKey } from '#lib/payer-api/errors';
import { clientSigningKey } from '#lib/payer-api/signing-keys/client-signing-key';
import { dynamoPayerKeySetStore } from '#lib/payer-api/signing-keys/dynamo-key-set-store';
import { keeperOf } from '#lib/payer-api/signing-keys/keepers';
import { jwksPathOf, keySetIdOf } from '#lib/payer-api/signing-keys/key-set-id';
import { JWKS_MAX_AGE_SECONDS } from '#lib/payer-api/signing-keys/key-sets';
import { LOCAL_PAYER_KEYS_DIR } from '#lib/payer-api/signing-keys/local-key-keeper';
import { rotatePayerSigningKey } from '#lib/payer-api/signing-keys/rotation';
import { clientAssertion } from '#lib/payer-api/smart/client-assertion';
import { baseUrl, call, newTenant } from '#test/support/api';

/*
 * Payer signing keys on the local stack: made by the real admin CLI (the local keeper, under the stack's
 * state directory), published by the public JWKS route over HTTP, used by the signer of the client that
 * owns them and by no other.
 */
const run = promisify(execFile);
const stateDir = mkdtempSync(join(tmpdir(), 'payer-keys-cli-'));
writeFileSync(join(stateDir, 'stack.json'), JSON.stringify({ baseUrl, env: inject('stackEnv') }));
const admin = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', ...args], {
    env: { ...process.env, LOCAL_STATE_DIR: stateDir },
  });
  return JSON.parse(stdout);
};

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'];
const jwks = (keySetId: string) => call('GET', jwksPathOf(keySetId), { apiKey: null });
const tokenUrl = 'https://payer.example/auth/token';

describe('payer signing keys', () => {
  let a: { clientId: string; kid: string; keySetId: string; jwksUri: string };
  let b: { clientId: string; kid: string; keySetId: string };

  beforeAll(async () => {
    const [tenantA, tenantB] = await Promise.all([newTenant('payer keys A'), newTenant('payer keys B')]);
    a = await admin('rotate-payer-signing-key', tenantA.clientId);
    b = await admin('rotate-payer-signing-key', tenantB.clientId);
  }, 60_000);

  it('rotate-payer-signing-key makes a first key that signs at once, and says where its JWKS is', () => {
    expect(Object.keys(a).sort()).toEqual(['activeFrom', 'clientId', 'discardedKids', 'jwksUri', 'keySetId', 'kid']);
    expect(a.keySetId).toBe(keySetIdOf(a.clientId));
    expect(a.jwksUri).toBe(`${baseUrl}/api/external/v1.1/Payers/jwks/${a.keySetId}`);
    expect(Date.parse((a as unknown as { activeFrom: string }).activeFrom)).toBeLessThanOrEqual(Date.now());
  });

  it('publishes the public key, without an API key, cacheable, with no private member', async () => {
    const response = await jwks(a.keySetId);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe(`public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    expect(response.body.keys).toHaveLength(1);
    const [key] = response.body.keys;
    expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(key).toMatchObject({ kty: 'RSA', kid: a.kid, alg: 'RS384', use: 'sig', e: 'AQAB' });
    for (const member of PRIVATE_MEMBERS) expect(response.text).not.toContain(`"${member}"`);
    // An API key changes nothing, a wrong one included: the route is public.
    expect((await call('GET', jwksPathOf(a.keySetId), { apiKey: 'not-a-key' })).body).toEqual(response.body);
  });

  it('answers 404 for a key set nobody has, and 400 for what cannot be one; neither is cached', async () => {
    const unknown = await jwks('AAAAAAAAAAAAAAAAAAAAAA');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('cache-control')).toBe('no-store');
    const malformed = await jwks('not-a-key-set');
    expect(malformed.status).toBe(400);
    expect(malformed.body.parameter).toBe('keySetId');
  });

  it("signs a client's assertions with its own key only: they verify against its JWKS, not another's", async () => {
    const key = await clientSigningKey(a.clientId);
    expect(key.kid).toBe(a.kid);
    const assertion = await clientAssertion({ clientId: 'org-at-payer', tokenUrl, key });
    // As a payer verifies: fetching the jwksUri over HTTP.
    const verified = await jwtVerify(assertion, createRemoteJWKSet(new URL(a.jwksUri)), {
      issuer: 'org-at-payer',
      audience: tokenUrl,
    });
    expect(verified.protectedHeader.kid).toBe(a.kid);
    await expect(
      jwtVerify(assertion, createRemoteJWKSet(new URL(`${baseUrl}${jwksPathOf(b.keySetId)}`))),
    ).rejects.toThrow(/no applicable key|matching/i);
    expect((await clientSigningKey(b.clientId)).kid).toBe(b.kid);
    expect(b.kid).not.toBe(a.kid);
  });

  it('never lends a key to a client without one, nor reads a key set that is not the client’s own', async () => {
    const tenantC = await newTenant('payer keys C');
    await expect(clientSigningKey(tenantC.clientId)).rejects.toBeInstanceOf(NoSigningKey);
    // A key set of A's written into C's partition (as a faulty write could) is not C's: it never signs for C.
    const aSet = (await dynamoPayerKeySetStore.ofClient(a.clientId))!;
    const forged = {
      ...payerSigningKeySetEntity.toItem(aSet),
      ...payerSigningKeySetEntity.key({ clientId: tenantC.clientId }),
    };
    await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...forged, gsi1pk: 'PAYERJWKS#none' } }));
    await expect(clientSigningKey(tenantC.clientId)).rejects.toBeInstanceOf(NoSigningKey);
  });

  it('publishes the next key beside the signing one before any assertion uses it', async () => {
    const next = await admin('rotate-payer-signing-key', a.clientId);
    expect(next.kid).not.toBe(a.kid);
    expect(Date.parse(next.activeFrom) - Date.now()).toBeGreaterThan((JWKS_MAX_AGE_SECONDS - 30) * 1000);
    const published = await jwks(a.keySetId);
    expect(published.body.keys.map((key: { kid: string }) => key.kid)).toEqual([a.kid, next.kid]);
    // Still signing with the first: payers may hold a cached JWKS without the new key.
    expect((await clientSigningKey(a.clientId)).kid).toBe(a.kid);
    const listed = await admin('list-payer-signing-keys', a.clientId);
    expect(listed).toMatchObject({ clientId: a.clientId, keySetId: a.keySetId, jwksUri: a.jwksUri });
    expect(listed.keys.map(({ kid, state }: { kid: string; state: string }) => [kid, state])).toEqual([
      [a.kid, 'signing'],
      [next.kid, 'next'],
    ]);
    expect(JSON.stringify(listed)).not.toMatch(/"(d|p|q|dp|dq|qi|keyRef)"/);
  }, 30_000);

  it('discards the private keys of retired keys at the next rotation', async () => {
    const { clientId } = await newTenant('payer keys D');
    const keeper = keeperOf('local');
    const rotate = (minutes: number) =>
      rotatePayerSigningKey({
        store: dynamoPayerKeySetStore,
        keeper,
        clientId,
        now: new Date(Date.now() + minutes * 60_000),
      });
    const first = await rotate(0);
    const { keyRef } = (await dynamoPayerKeySetStore.ofClient(clientId))!.keys[0]!;
    const keyFile = join(inject('stackEnv').LOCAL_STATE_DIR!, LOCAL_PAYER_KEYS_DIR, keyRef);
    expect(existsSync(keyFile)).toBe(true);
    expect((await rotate(1)).discardedKids).toEqual([]);
    // Three hours on, the first key has been retired for well over an hour: dropped, its file gone.
    const third = await rotate(180);
    expect(third.discardedKids).toEqual([first.kid]);
    expect(existsSync(keyFile)).toBe(false);
    expect((await dynamoPayerKeySetStore.ofClient(clientId))!.keys.map((key) => key.kid)).not.toContain(first.kid);
  });

  it('refuses a client it does not know', async () => {
    const failure = await admin('rotate-payer-signing-key', 'no-such-client').then(
      () => expect.unreachable('it rotated'),
      (error) => JSON.parse(error.stderr),
    );
    expect(failure).toEqual({ error: 'Unknown client no-such-client' });
  });
});
