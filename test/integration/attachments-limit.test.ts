import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTACHMENTS_PER_REQUEST } from '#lib/attachments/attachment-limits';
import { ABANDONED_SLOT_SECONDS } from '#lib/attachments/attachment-slots';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { attachments } from '#lib/attachments/service';
import { dynamo } from '#lib/aws/dynamodb';
import { tableName } from '#lib/config/resources';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { attachmentSlotsEntity } from '#lib/entities/attachment';
import { keys } from '#lib/object-keys';
import { call, newTenant } from '#test/support/api';
import { attachmentsOf, expectProblem, newRequest, sample, sha256, upload } from './attachments-support.ts';

/**
 * The limit on a request's attachments, held by its slots (docs/attachments.md, "The limit on
 * attachments, under concurrent uploads"): exact under concurrent uploads, and self-healing when the
 * slots and the records disagree.
 */
let tenant: Awaited<ReturnType<typeof newTenant>>;
let apiKey: string;

beforeAll(async () => {
  tenant = await newTenant('attachment-limit');
  apiKey = tenant.apiKey;
});

const limitMessage = (externalId: string) =>
  `Request ${externalId} already has ${MAX_ATTACHMENTS_PER_REQUEST} attachments, the most it may have.`;

const pdf = () => ({ fileName: 'labs.pdf', contentType: 'application/pdf', bytes: sample.pdf(2048) });

/** `count` declared (presigned, pending) attachments, written through the service, a few at a time. */
const seed = async (externalId: string, count: number) => {
  const bytes = sample.pdf(1024);
  for (let done = 0; done < count; done += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, count - done) }, () =>
        attachments.requestUpload(tenant.clientId, externalId, {
          fileName: 'seed.pdf',
          contentType: 'application/pdf',
          size: bytes.length,
          sha256: sha256(bytes),
        }),
      ),
    );
  }
};

const slotsOf = async (externalId: string) => dynamoAttachmentStore.getSlots(tenant.clientId, externalId);
const recordIds = async (externalId: string) =>
  (await dynamoAttachmentStore.listByRequest(tenant.clientId, externalId)).map((r) => r.attachmentId).sort();

/** Overwrites the request's slots by hand, as drift would leave them. */
const setSlots = async (externalId: string, slots: Record<string, string>) => {
  const at = new Date().toISOString();
  await dynamo.send(
    new PutCommand({
      TableName: tableName(),
      Item: attachmentSlotsEntity.toItem({
        clientId: tenant.clientId,
        externalId,
        slots,
        version: 50,
        createdAt: at,
        updatedAt: at,
      }),
    }),
  );
};

const slotsTaken = (count: number, takenAt: string) =>
  Object.fromEntries(Array.from({ length: count }, () => [randomUUID(), takenAt]));

describe('the limit on attachments per request', () => {
  it(`holds under concurrent uploads: ${MAX_ATTACHMENTS_PER_REQUEST - 10} attachments, then 30 at once → exactly ${MAX_ATTACHMENTS_PER_REQUEST}`, async () => {
    const externalId = await newRequest(apiKey);
    await seed(externalId, MAX_ATTACHMENTS_PER_REQUEST - 10);

    const results = await Promise.all(Array.from({ length: 30 }, () => upload(apiKey, externalId, pdf())));
    const stored = results.filter((res) => res.status === 201);
    const refused = results.filter((res) => res.status !== 201);
    expect(stored).toHaveLength(10);
    expect(refused).toHaveLength(20);
    for (const res of refused) {
      expectProblem(res, 409);
      expect(res.body.detail).toBe(limitMessage(externalId));
    }

    const list = await call('GET', attachmentsOf(externalId), { apiKey });
    expect(list.body.attachments).toHaveLength(MAX_ATTACHMENTS_PER_REQUEST);
    expect(list.body.attachments.map((a: { attachmentId: string }) => a.attachmentId)).toEqual(
      expect.arrayContaining(stored.map((res) => res.body.attachmentId)),
    );
    // Every record holds a slot, and nothing else does.
    expect(Object.keys((await slotsOf(externalId))!.slots).sort()).toEqual(await recordIds(externalId));
  });

  it('frees the slot of a deleted attachment', async () => {
    const externalId = await newRequest(apiKey);
    await seed(externalId, MAX_ATTACHMENTS_PER_REQUEST - 1);
    const last = await upload(apiKey, externalId, pdf());
    expect(last.status, last.text).toBe(201);
    expectProblem(await upload(apiKey, externalId, pdf()), 409);

    expect((await call('DELETE', `${attachmentsOf(externalId)}/${last.body.attachmentId}`, { apiKey })).status).toBe(
      204,
    );
    expect(Object.keys((await slotsOf(externalId))!.slots)).toHaveLength(MAX_ATTACHMENTS_PER_REQUEST - 1);
    const again = await upload(apiKey, externalId, pdf());
    expect(again.status, again.text).toBe(201);
    expectProblem(await upload(apiKey, externalId, pdf()), 409);
  });

  it('counts a rejected attachment until it is deleted, as before', async () => {
    const externalId = await newRequest(apiKey);
    await seed(externalId, MAX_ATTACHMENTS_PER_REQUEST - 1);
    const bytes = sample.pdf(5000);
    const { record, upload: put } = await attachments.requestUpload(tenant.clientId, externalId, {
      fileName: 'wrong.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: sha256(sample.pdf(5000)),
    });
    expect((await fetch(put.url, { method: 'PUT', headers: put.headers, body: bytes })).status).toBe(200);
    await expect
      .poll(async () => (await dynamoAttachmentStore.get(tenant.clientId, externalId, record.attachmentId))?.status)
      .toBe('rejected');
    expectProblem(await upload(apiKey, externalId, pdf()), 409);
    expect((await call('DELETE', `${attachmentsOf(externalId)}/${record.attachmentId}`, { apiKey })).status).toBe(204);
    expect((await upload(apiKey, externalId, pdf())).status).toBe(201);
  });
});

describe('self-healing slots', () => {
  it('reclaims slots leaked by functions that died between their writes: uploads work again', async () => {
    const externalId = await newRequest(apiKey);
    const first = await upload(apiKey, externalId, pdf());
    expect(first.status, first.text).toBe(201);
    const real = { [first.body.attachmentId]: first.body.createdAt };

    // Every other slot taken, by attachments that never got a record, long ago: the request looks full.
    const longAgo = new Date(Date.now() - (ABANDONED_SLOT_SECONDS + 60) * 1000).toISOString();
    await setSlots(externalId, { ...real, ...slotsTaken(MAX_ATTACHMENTS_PER_REQUEST - 1, longAgo) });
    const res = await upload(apiKey, externalId, pdf());
    expect(res.status, res.text).toBe(201);
    expect(Object.keys((await slotsOf(externalId))!.slots).sort()).toEqual(await recordIds(externalId));
    expect(await recordIds(externalId)).toHaveLength(2);
  });

  it('keeps recent slots without a record (uploads in flight): the limit holds until they are old enough to be leaks', async () => {
    const externalId = await newRequest(apiKey);
    await setSlots(externalId, slotsTaken(MAX_ATTACHMENTS_PER_REQUEST, new Date().toISOString()));
    const refused = await upload(apiKey, externalId, pdf());
    expectProblem(refused, 409);
    expect(refused.body.detail).toBe(limitMessage(externalId));

    const justOldEnough = new Date(Date.now() - (ABANDONED_SLOT_SECONDS + 1) * 1000).toISOString();
    await setSlots(externalId, slotsTaken(MAX_ATTACHMENTS_PER_REQUEST, justOldEnough));
    expect((await upload(apiKey, externalId, pdf())).status).toBe(201);
  });

  it('gives records without slots theirs (records from before slots, a lost slots item): the limit holds', async () => {
    const externalId = await newRequest(apiKey);
    const at = new Date().toISOString();
    const legacy = Array.from({ length: MAX_ATTACHMENTS_PER_REQUEST }, (): AttachmentRecord => {
      const attachmentId = randomUUID();
      return {
        clientId: tenant.clientId,
        externalId,
        attachmentId,
        objectKey: keys.attachmentObject(tenant.clientId, externalId, attachmentId),
        fileName: 'old.pdf',
        contentType: 'application/pdf',
        size: 10,
        sha256: sha256(sample.pdf(10)),
        uploadMethod: 'direct',
        status: 'available',
        version: 2,
        createdAt: at,
        updatedAt: at,
      };
    });
    for (const record of legacy) await dynamoAttachmentStore.create(record);
    expect(await slotsOf(externalId)).toBeUndefined();

    const refused = await upload(apiKey, externalId, pdf());
    expectProblem(refused, 409);
    expect(refused.body.detail).toBe(limitMessage(externalId));
    expect(Object.keys((await slotsOf(externalId))!.slots).sort()).toEqual(await recordIds(externalId));

    const gone = legacy[0]!.attachmentId;
    expect((await call('DELETE', `${attachmentsOf(externalId)}/${gone}`, { apiKey })).status).toBe(204);
    expect((await upload(apiKey, externalId, pdf())).status).toBe(201);
    expectProblem(await upload(apiKey, externalId, pdf()), 409);
  });
});
