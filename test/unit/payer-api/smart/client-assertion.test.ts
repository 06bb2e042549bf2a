import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { jwksOf } from '#lib/payer-api/signing-keys/key-sets';
import { LOCAL_PAYER_KEYS_DIR } from '#lib/payer-api/signing-keys/local-key-keeper';
import { ASSERTION_LIFETIME_SECONDS, clientAssertion } from '#lib/payer-api/smart/client-assertion';
import { localSigningKey } from './signing-key.ts';

const tokenUrl = 'https://payer.example/auth/token';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('clientAssertion (SMART Backend Services, private_key_jwt)', () => {
  it('verifies with jose against the published JWK, with the claims and header SMART requires', async () => {
    const { keySet, key } = await localSigningKey();
    const now = new Date();
    const assertion = await clientAssertion({ clientId: 'payer-issued-id', tokenUrl, key, now });
    const jwks = createLocalJWKSet(jwksOf(keySet, now));
    const { payload, protectedHeader } = await jwtVerify(assertion, jwks, {
      issuer: 'payer-issued-id',
      subject: 'payer-issued-id',
      audience: tokenUrl,
      algorithms: ['RS384'],
      typ: 'JWT',
      currentDate: now,
    });
    expect(protectedHeader).toEqual({ alg: 'RS384', typ: 'JWT', kid: key.kid });
    expect(jwksOf(keySet, now).keys.map((jwk) => jwk.kid)).toContain(protectedHeader.kid);
    expect(Object.keys(payload).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'sub']);
    expect(payload.iat).toBe(Math.floor(now.getTime() / 1000));
    expect(payload.exp! - payload.iat!).toBe(ASSERTION_LIFETIME_SECONDS);
    expect(ASSERTION_LIFETIME_SECONDS).toBeLessThanOrEqual(300);
    expect(payload.jti).toMatch(UUID);
  });

  it('gives every assertion its own jti', async () => {
    const { key } = await localSigningKey();
    const jtis = new Set<unknown>();
    for (let i = 0; i < 20; i++) {
      const assertion = await clientAssertion({ clientId: 'c', tokenUrl, key });
      jtis.add(JSON.parse(Buffer.from(assertion.split('.')[1]!, 'base64url').toString()).jti);
    }
    expect(jtis.size).toBe(20);
  });

  it("does not verify against another client's published keys", async () => {
    const a = await localSigningKey('client-a');
    const b = await localSigningKey('client-b');
    const assertion = await clientAssertion({ clientId: 'c', tokenUrl, key: a.key });
    expect(decodeProtectedHeader(assertion).kid).toBe(a.key.kid);
    await expect(jwtVerify(assertion, createLocalJWKSet(jwksOf(b.keySet, new Date())))).rejects.toThrow(
      /no applicable key|matching/i,
    );
  });

  it('keeps the local private key in a file only its owner reads', async () => {
    const { stateDir, keyRef } = await localSigningKey();
    expect(statSync(join(stateDir, LOCAL_PAYER_KEYS_DIR)).mode & 0o777).toBe(0o700);
    expect(statSync(join(stateDir, LOCAL_PAYER_KEYS_DIR, keyRef)).mode & 0o777).toBe(0o600);
  });
});
