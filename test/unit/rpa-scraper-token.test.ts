import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyConfigurationError } from '#lib/crypto/key-sources';
import { InvalidScraperToken } from '#lib/runs/errors';
import {
  SCRAPER_TOKEN_AUDIENCE,
  SCRAPER_TOKEN_ISSUER,
  scraperTokenKeysFromEnvironment,
  scraperTokens,
} from '#lib/runs/scraper-token';

const key = randomBytes(32);
const otherKey = randomBytes(32);
const t0 = new Date('2026-11-22T10:00:00Z');
const at = (seconds: number) => () => new Date(t0.getTime() + seconds * 1000);
const grant = { clientId: 'client-a', keyId: 'key-1', clientUserId: 'user-1', requestExternalId: 'REQ-1' };

const tokensWith = (keys: Buffer[], now = at(0)) => scraperTokens(async () => keys, now);

/** The reason a token was refused (InvalidScraperToken), or 'accepted'. */
const verdict = async (verify: Promise<unknown>) => {
  try {
    await verify;
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidScraperToken);
    expect((error as Error).message).toBe('The scraper token is not valid');
    return (error as InvalidScraperToken).reason;
  }
};

describe('scraper token', () => {
  it('carries the documented claims for 15 minutes, signed HS256', async () => {
    const { token, expiresAt } = await tokensWith([key]).sign(grant);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'HS256', typ: 'JWT', kid: expect.any(String) });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: SCRAPER_TOKEN_ISSUER,
      aud: SCRAPER_TOKEN_AUDIENCE,
      sub: 'user-1',
      cid: 'client-a',
      akid: 'key-1',
      req: 'REQ-1',
      iat: t0.getTime() / 1000,
      exp: t0.getTime() / 1000 + 900,
    });
    expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(expiresAt).toBe('2026-11-22T10:15:00.000Z');
    // Two tokens for the same grant are different tokens.
    expect(decodeJwt((await tokensWith([key]).sign(grant)).token).jti).not.toBe(claims.jti);
  });

  it('verifies its own token for its request, until it expires', async () => {
    const { token } = await tokensWith([key]).sign(grant);
    expect(await tokensWith([key], at(899)).verify(token, 'REQ-1')).toEqual({
      clientId: 'client-a',
      keyId: 'key-1',
      clientUserId: 'user-1',
      requestExternalId: 'REQ-1',
      tokenId: decodeJwt(token).jti,
      expiresAt: '2026-11-22T10:15:00.000Z',
    });
    expect(await verdict(tokensWith([key], at(901)).verify(token, 'REQ-1'))).toBe('ERR_JWT_EXPIRED');
  });

  it('refuses a token for another request', async () => {
    const { token } = await tokensWith([key]).sign(grant);
    expect(await verdict(tokensWith([key]).verify(token, 'REQ-2'))).toBe('another request');
  });

  it('refuses a missing, oversized or malformed token', async () => {
    const tokens = tokensWith([key]);
    expect(await verdict(tokens.verify(undefined, 'REQ-1'))).toBe('missing');
    expect(await verdict(tokens.verify('', 'REQ-1'))).toBe('missing');
    expect(await verdict(tokens.verify('x'.repeat(5000), 'REQ-1'))).toBe('too long');
    for (const malformed of ['abc', 'a.b.c', 'a.b', '...', 'eyJhbGciOiJub25lIn0.e30.']) {
      expect(await verdict(tokens.verify(malformed, 'REQ-1'))).toMatch(/^ERR_/);
    }
  });

  it('refuses a tampered token: another request or client in the payload, or another signature', async () => {
    const { token } = await tokensWith([key]).sign(grant);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    for (const changed of [
      { ...claims, req: 'REQ-2' },
      { ...claims, cid: 'client-b' },
      { ...claims, akid: 'key-2' },
      { ...claims, exp: claims.exp + 3600 },
    ]) {
      const forged = `${header}.${Buffer.from(JSON.stringify(changed)).toString('base64url')}.${signature}`;
      expect(await verdict(tokensWith([key]).verify(forged, changed.req))).toBe(
        'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
      );
    }
    const flipped = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('A') ? 'B' : 'A'}A`;
    expect(await verdict(tokensWith([key]).verify(flipped, 'REQ-1'))).toMatch(/^ERR_JWS/);
  });

  it("refuses a foreign token: signed with another deployment's key, even with our key id", async () => {
    const { token } = await tokensWith([otherKey]).sign(grant);
    expect(await verdict(tokensWith([key]).verify(token, 'REQ-1'))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
    const kid = decodeProtectedHeader((await tokensWith([key]).sign(grant)).token).kid!;
    const spoofed = await new SignJWT({ cid: 'client-a', akid: 'key-1', req: 'REQ-1' })
      .setProtectedHeader({ alg: 'HS256', kid })
      .setIssuer(SCRAPER_TOKEN_ISSUER)
      .setAudience(SCRAPER_TOKEN_AUDIENCE)
      .setSubject('user-1')
      .setJti('x')
      .setIssuedAt(t0.getTime() / 1000)
      .setExpirationTime(t0.getTime() / 1000 + 900)
      .sign(otherKey);
    expect(await verdict(tokensWith([key]).verify(spoofed, 'REQ-1'))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
  });

  it('refuses tokens of the right key but the wrong audience, issuer, algorithm or lifetime', async () => {
    const base = () =>
      new SignJWT({ cid: 'client-a', akid: 'key-1', req: 'REQ-1' })
        .setIssuer(SCRAPER_TOKEN_ISSUER)
        .setAudience(SCRAPER_TOKEN_AUDIENCE)
        .setSubject('user-1')
        .setJti('x')
        .setIssuedAt(t0.getTime() / 1000)
        .setExpirationTime(t0.getTime() / 1000 + 900);
    const kid = decodeProtectedHeader((await tokensWith([key]).sign(grant)).token).kid!;
    const verify = (token: string) => verdict(tokensWith([key]).verify(token, 'REQ-1'));

    expect(await verify(await base().setProtectedHeader({ alg: 'HS256', kid }).sign(key))).toBe('accepted');
    expect(await verify(await base().setAudience('api').setProtectedHeader({ alg: 'HS256', kid }).sign(key))).toBe(
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
    );
    expect(
      await verify(await base().setIssuer('someone-else').setProtectedHeader({ alg: 'HS256', kid }).sign(key)),
    ).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
    expect(
      await verify(
        await base()
          .setProtectedHeader({ alg: 'HS512', kid })
          .sign(Buffer.concat([key, key])),
      ),
    ).toBe('ERR_JOSE_ALG_NOT_ALLOWED');
    // A token issued for longer than 15 minutes is refused once 15 minutes have passed.
    const long = await base()
      .setExpirationTime(t0.getTime() / 1000 + 86_400)
      .setProtectedHeader({ alg: 'HS256', kid })
      .sign(key);
    expect(await verdict(tokensWith([key], at(901)).verify(long, 'REQ-1'))).toBe('ERR_JWT_EXPIRED');
    // Each grant claim is required: the request, and the API key that asked for it (tokens from before it was).
    for (const claims of [
      { cid: 'client-a', akid: 'key-1' },
      { cid: 'client-a', req: 'REQ-1' },
    ]) {
      const incomplete = await new SignJWT(claims)
        .setIssuer(SCRAPER_TOKEN_ISSUER)
        .setAudience(SCRAPER_TOKEN_AUDIENCE)
        .setSubject('user-1')
        .setJti('x')
        .setIssuedAt(t0.getTime() / 1000)
        .setExpirationTime(t0.getTime() / 1000 + 900)
        .setProtectedHeader({ alg: 'HS256', kid })
        .sign(key);
      expect(await verify(incomplete), JSON.stringify(claims)).toBe('ERR_JWT_CLAIM_VALIDATION_FAILED');
    }
  });

  it('rotates: the first key signs, every key verifies', async () => {
    const old = await tokensWith([key]).sign(grant);
    const rotated = tokensWith([otherKey, key]);
    expect(await verdict(rotated.verify(old.token, 'REQ-1'))).toBe('accepted');
    const fresh = await rotated.sign(grant);
    expect(await verdict(tokensWith([otherKey]).verify(fresh.token, 'REQ-1'))).toBe('accepted');
    expect(await verdict(tokensWith([key]).verify(fresh.token, 'REQ-1'))).toBe('ERR_JWS_SIGNATURE_VERIFICATION_FAILED');
  });
});

describe('scraper token key resolution', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rpa-token-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('RPA_TOKEN_KEY: base64 keys of at least 32 bytes, comma-separated', async () => {
    const keys = await scraperTokenKeysFromEnvironment({
      RPA_TOKEN_KEY: `${key.toString('base64')}, ${otherKey.toString('base64url')}`,
      LOCAL_STATE_DIR: dir,
    });
    expect(keys).toEqual([key, otherKey]);
    await expect(
      scraperTokenKeysFromEnvironment({ RPA_TOKEN_KEY: randomBytes(16).toString('base64') }),
    ).rejects.toThrow(KeyConfigurationError);
  });

  it('else a 0600 key file under LOCAL_STATE_DIR, created once and then reused', async () => {
    const [first] = await scraperTokenKeysFromEnvironment({ LOCAL_STATE_DIR: dir });
    const [second] = await scraperTokenKeysFromEnvironment({ LOCAL_STATE_DIR: dir });
    expect(first).toHaveLength(32);
    expect(second).toEqual(first);
    expect(statSync(join(dir, 'rpa-token.key')).mode & 0o777).toBe(0o600);
  });

  it('else a configuration error, never a made-up key', async () => {
    await expect(scraperTokenKeysFromEnvironment({})).rejects.toThrow(KeyConfigurationError);
  });
});
