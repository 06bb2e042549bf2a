import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import { fingerprintsOf } from '#lib/http/request-fingerprint';
import { TABLE_KEY } from '#lib/table';
import { type ApiResponse, call, newTenant, uniqueId } from '#test/support/api';

/*
 * An idempotency record must hold nothing from which a secret of its request can be checked offline
 * (a plain hash of a body that holds a password can be brute-forced by anyone who reads the table). A portal account is created with a known password and TOTP seed under an
 * Idempotency-Key, then the table is read as someone with read access to it would: no stored value
 * is a plain hash (MD5, SHA-1, SHA-256, SHA-512; hex, base64, base64url) of the body, of the request
 * as compared, or of a secret; none holds a secret. The stored fingerprint is recomputed with the
 * local stack's server key, to show what it hashes is exactly that request (so a plain hash of it
 * would have been caught), and that without the key it cannot be.
 */
type Tenant = Awaited<ReturnType<typeof newTenant>>;
const accounts = '/api/external/v1.1/Portals/accounts';

let tenant: Tenant;
beforeAll(async () => {
  tenant = await newTenant('idempotency-fingerprint');
});

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const totpSeed = () => Array.from(randomBytes(32), (byte) => BASE32[byte % 32]).join('');

const accountBody = (password: string, totpSecret: string) => ({
  externalId: uniqueId('pacc'),
  clientUserId: tenant.clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01'],
  displayName: 'Fingerprinted office',
  username: 'fingerprint@clinic.example',
  password,
  totpSecret,
});

const create = (key: string, body: unknown) =>
  call('POST', accounts, { apiKey: tenant.apiKey, body, headers: { 'Idempotency-Key': key } });

/** Every idempotency record of the table, read raw. */
const idempotencyRecords = async () => {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: tableName(),
        ExclusiveStartKey,
        FilterExpression: 'begins_with(#pk, :prefix)',
        ExpressionAttributeNames: { '#pk': TABLE_KEY.partition },
        ExpressionAttributeValues: { ':prefix': 'IDEMPOTENCY#' },
      }),
    );
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
};

/** Every string and number in a stored item, however deep (the response is a nested map). */
const storedValues = (value: unknown): string[] => {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap(storedValues);
  if (value && typeof value === 'object') return Object.values(value).flatMap(storedValues);
  return [];
};

/** Plain digests of each text, in every common algorithm and encoding. */
const plainDigests = (texts: string[]) =>
  new Set(
    texts.flatMap((text) =>
      ['md5', 'sha1', 'sha256', 'sha512'].flatMap((algorithm) =>
        (['hex', 'base64', 'base64url'] as const).map((encoding) =>
          createHash(algorithm).update(text).digest(encoding),
        ),
      ),
    ),
  );

/** The request as idempotency.ts compares it, and the JSON text Powertools hashes of a string. */
const requestText = (body: unknown) => JSON.stringify(['POST', accounts, {}, body]);

const expectKeyReused = (res: ApiResponse) => {
  expect(res.status, res.text).toBe(422);
  expect(res.body.detail).toMatch(/already used for a different request/);
};

describe('idempotency records of a portal account creation', () => {
  it('keep nothing from which the password or TOTP secret could be checked offline', async () => {
    const password = `Guessable-${uniqueId('pw')}`;
    const totpSecret = totpSeed();
    const body = accountBody(password, totpSecret);
    const key = uniqueId('idem');
    const first = await create(key, body);
    expect(first.status, first.text).toBe(201);
    // The response, which the record keeps, says only that the secrets are set.
    expect(first.body).toMatchObject({ passwordSet: true, totpSecretSet: true });
    expect(first.text).not.toContain(password);
    expect(first.text).not.toContain(totpSecret);

    const ours = (await idempotencyRecords()).filter((item) => JSON.stringify(item).includes(body.externalId));
    expect(ours).toHaveLength(1);
    const record = ours[0]!;
    expect(record).toMatchObject({ status: 'COMPLETED', validation: expect.any(String) });

    const texts = [
      password,
      totpSecret,
      JSON.stringify(body),
      JSON.stringify(Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b)))),
      requestText(body),
      JSON.stringify(requestText(body)),
      JSON.stringify(['POST', accounts, null, body]),
    ];
    const digests = plainDigests(texts);
    const values = storedValues(record);
    expect(values.length).toBeGreaterThan(5);
    for (const value of values) {
      expect(digests.has(value), `stored value ${value} is a plain hash`).toBe(false);
      for (const digest of digests) expect(value).not.toContain(digest);
      expect(value).not.toContain(password);
      expect(value).not.toContain(totpSecret);
    }

    // What is stored is Powertools' SHA-256 of the HMAC of exactly that request under the server key.
    const serverKey = Buffer.from(
      readFileSync(join(inject('stackEnv').LOCAL_STATE_DIR!, 'idempotency-fingerprint.key'), 'utf8').trim(),
      'base64',
    );
    const [fingerprint] = fingerprintsOf([serverKey], requestText(body));
    expect(record.validation).toBe(createHash('sha256').update(JSON.stringify(fingerprint)).digest('base64'));
    const [guessed] = fingerprintsOf([randomBytes(32)], requestText(body));
    expect(record.validation).not.toBe(createHash('sha256').update(JSON.stringify(guessed)).digest('base64'));
  });

  it('still tells a retry from another request, whether a secret or another field differs', async () => {
    const password = `Known-${uniqueId('pw')}`;
    const body = accountBody(password, totpSeed());
    const key = uniqueId('idem');
    const first = await create(key, body);
    expect(first.status, first.text).toBe(201);

    const replay = await create(key, body);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);

    expectKeyReused(await create(key, { ...body, password: `${password}-2` }));
    expectKeyReused(await create(key, { ...body, totpSecret: totpSeed() }));
    expectKeyReused(await create(key, { ...body, displayName: 'Another office' }));
    // The refusals left the first response in place.
    expect((await create(key, body)).headers.get('idempotent-replayed')).toBe('true');
  });
});
