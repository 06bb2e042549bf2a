import { FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import { describe, expect, it } from 'vitest';
import { apiKeyState, MAX_EXPIRY_MS, MIN_EXPIRY_MS, parseExpiresIn } from '#lib/tenancy/api-keys';
import { flushAuthorizerCache, noCacheToFlush } from '#lib/tenancy/authorizer-cache';
import { clientSending } from '#test/support/recording-api-gateway';

describe('API key expiry (--expires-in)', () => {
  it('reads whole hours and days', () => {
    expect(parseExpiresIn('12h')).toBe(12 * 3_600_000);
    expect(parseExpiresIn('90d')).toBe(90 * 86_400_000);
    expect(parseExpiresIn('1h')).toBe(MIN_EXPIRY_MS);
    expect(parseExpiresIn('365d')).toBe(MAX_EXPIRY_MS);
    expect(parseExpiresIn('8760h')).toBe(MAX_EXPIRY_MS);
  });

  it('refuses other units, zero, fractions, signs, padding and more than a year', () => {
    for (const bad of [
      '',
      '0d',
      '0h',
      '366d',
      '8761h',
      '1.5d',
      '-1d',
      '+1d',
      '01d',
      ' 1d',
      '1d ',
      '1m',
      '30',
      'd',
      '1D',
    ]) {
      expect(() => parseExpiresIn(bad), JSON.stringify(bad)).toThrow(/^--expires-in takes whole hours or days/);
    }
  });
});

describe('API key state', () => {
  const now = new Date('2026-06-01T12:00:00.000Z');
  it('is active until it expires, then expired; revoked whatever its expiry', () => {
    expect(apiKeyState({}, now)).toBe('active');
    expect(apiKeyState({ expiresAt: '2026-06-01T12:00:00.001Z' }, now)).toBe('active');
    expect(apiKeyState({ expiresAt: '2026-06-01T12:00:00.000Z' }, now)).toBe('expired');
    expect(apiKeyState({ revokedAt: '2026-05-01T00:00:00.000Z' }, now)).toBe('revoked');
    expect(apiKeyState({ revokedAt: '2026-05-01T00:00:00.000Z', expiresAt: '2026-05-02T00:00:00.000Z' }, now)).toBe(
      'revoked',
    );
  });
});

describe('authorizer cache flush after a revocation', () => {
  it("flushes the stage's authorizers cache of the named API and stage", async () => {
    const { client, sent } = clientSending(async () => ({}));
    expect(await flushAuthorizerCache(client, { restApiId: 'a1b2c3d4e5', stageName: 'prod' })).toEqual({
      authorizerCacheFlushed: true,
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeInstanceOf(FlushStageAuthorizersCacheCommand);
    expect((sent[0] as FlushStageAuthorizersCacheCommand).input).toEqual({
      restApiId: 'a1b2c3d4e5',
      stageName: 'prod',
    });
  });

  it('reports a failed flush instead of throwing: the revocation stands', async () => {
    const { client } = clientSending(async () => {
      throw Object.assign(new Error('not allowed'), { name: 'AccessDeniedException' });
    });
    expect(await flushAuthorizerCache(client, { restApiId: 'a1b2c3d4e5', stageName: 'prod' })).toEqual({
      authorizerCacheFlushed: false,
      reason:
        'flush failed (AccessDeniedException): the key may still be accepted for up to 60 s where an answer is cached',
    });
  });

  it('says why nothing was flushed locally or without REST_API_ID', () => {
    expect(noCacheToFlush('local')).toEqual({
      authorizerCacheFlushed: false,
      reason: expect.stringContaining('the local gateway cannot be flushed from here'),
    });
    expect(noCacheToFlush('no-rest-api-id')).toMatchObject({ authorizerCacheFlushed: false, reason: /^REST_API_ID/ });
  });
});
