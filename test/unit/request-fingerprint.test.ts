import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyConfigurationError } from '#lib/crypto/key-sources';
import { fingerprintKeysFromEnvironment, fingerprintsOf } from '#lib/http/request-fingerprint';

const key = randomBytes(32);
const otherKey = randomBytes(32);
const request = JSON.stringify(['POST', '/things', {}, { password: 'Secret-1' }]);

describe('request fingerprints', () => {
  it('are an HMAC-SHA-256 of the request under each key, the current key first', () => {
    const [current, earlier, ...rest] = fingerprintsOf([key, otherKey], request);
    expect(rest).toEqual([]);
    expect(current).toBe(createHmac('sha256', key).update(`idempotency-request/v1\n${request}`).digest('base64url'));
    expect(earlier).toBe(
      createHmac('sha256', otherKey).update(`idempotency-request/v1\n${request}`).digest('base64url'),
    );
    expect(fingerprintsOf([key], request)).toEqual([current]);
  });

  it('differ per request and per key, and are no plain hash of the request', () => {
    const [fingerprint] = fingerprintsOf([key], request);
    expect(fingerprintsOf([key], request.replace('Secret-1', 'Secret-2'))[0]).not.toBe(fingerprint);
    expect(fingerprintsOf([otherKey], request)[0]).not.toBe(fingerprint);
    for (const algorithm of ['sha256', 'md5']) {
      for (const encoding of ['hex', 'base64', 'base64url'] as const) {
        expect(createHash(algorithm).update(request).digest(encoding)).not.toBe(fingerprint);
      }
    }
  });
});

describe('fingerprint key resolution', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idempotency-fingerprint-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('IDEMPOTENCY_FINGERPRINT_KEY: base64 keys of at least 32 bytes, comma-separated (rotation)', async () => {
    const keys = await fingerprintKeysFromEnvironment({
      IDEMPOTENCY_FINGERPRINT_KEY: `${key.toString('base64')}, ${otherKey.toString('base64url')}`,
      LOCAL_STATE_DIR: dir,
    });
    expect(keys).toEqual([key, otherKey]);
    await expect(
      fingerprintKeysFromEnvironment({ IDEMPOTENCY_FINGERPRINT_KEY: randomBytes(16).toString('base64') }),
    ).rejects.toThrow(KeyConfigurationError);
  });

  it('else a 0600 key file under LOCAL_STATE_DIR, created once and then reused', async () => {
    const [first] = await fingerprintKeysFromEnvironment({ LOCAL_STATE_DIR: dir });
    const [second] = await fingerprintKeysFromEnvironment({ LOCAL_STATE_DIR: dir });
    expect(first).toHaveLength(32);
    expect(second).toEqual(first);
    expect(statSync(join(dir, 'idempotency-fingerprint.key')).mode & 0o777).toBe(0o600);
  });

  it('else a configuration error, never a made-up key', async () => {
    await expect(fingerprintKeysFromEnvironment({})).rejects.toThrow(KeyConfigurationError);
  });
});
