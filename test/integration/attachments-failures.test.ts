import { beforeAll, describe, expect, it } from 'vitest';
import type { AttachmentStore } from '#lib/attachments/attachment-store';
import { attachmentService } from '#lib/attachments/attachments';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import type { ObjectStorage } from '#lib/attachments/object-storage';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { call, newTenant } from '#test/support/api';
import {
  attachmentsOf,
  download,
  eventually,
  expectProblem,
  newRequest,
  sample,
  sha256,
  stored,
} from './attachments-support.ts';

/**
 * Failure injection through the real code path: the lib service runs here against the same
 * emulators as the local stack, with a store or object storage that fails at one chosen step. The S3
 * event handler runs in the local stack as usual. No AWS service is mocked.
 */
class InjectedFailure extends Error {
  constructor(step: string) {
    super(`injected failure: ${step}`);
    this.name = 'InjectedFailure';
  }
}

let tenant: Awaited<ReturnType<typeof newTenant>>;
let apiKey: string;

beforeAll(async () => {
  tenant = await newTenant('attachment-failures');
  apiKey = tenant.apiKey;
});

const serviceWith = (parts: { store?: Partial<AttachmentStore>; objects?: Partial<ObjectStorage> }, now?: () => Date) =>
  attachmentService({
    requests: dynamoRequestStore,
    store: { ...dynamoAttachmentStore, ...parts.store },
    objects: { ...s3ObjectStorage, ...parts.objects },
    quotas: dynamoStorageQuotas,
    ...(now ? { now } : {}),
  });

/** Fails the first call that matches, then behaves. */
const once = <A extends unknown[], R>(
  step: string,
  real: (...args: A) => Promise<R>,
  when: (...args: A) => boolean = () => true,
) => {
  let armed = true;
  return async (...args: A) => {
    if (armed && when(...args)) {
      armed = false;
      throw new InjectedFailure(step);
    }
    return real(...args);
  };
};

const always = (step: string) => async () => {
  throw new InjectedFailure(step);
};

/** The real create, remembering the id of the record it wrote (the service generates it). */
const recordingCreate = () => {
  const recorded = {
    attachmentId: '',
    create: async (record: Parameters<typeof dynamoAttachmentStore.create>[0]) => {
      recorded.attachmentId = record.attachmentId;
      return dynamoAttachmentStore.create(record);
    },
  };
  return recorded;
};

const file = () => {
  const bytes = sample.pdf(30_000);
  return { fileName: 'labs.pdf', mediaType: 'application/pdf', bytes };
};

/** The attachment id the service generated: the one record of the request, whatever its status. */
const onlyRecord = async (externalId: string) => {
  const records = await dynamoAttachmentStore.listByRequest(tenant.clientId, externalId);
  expect(records).toHaveLength(1);
  return records[0]!;
};

/** Nothing stored and nothing visible, and it stays so once the S3 event handler has had its turn. */
const expectNothingLeft = async (externalId: string, attachmentId: string) => {
  await eventually(async () => {
    const raw = await stored(tenant.clientId, externalId, attachmentId);
    return !raw.object && !raw.record;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const raw = await stored(tenant.clientId, externalId, attachmentId);
  expect(raw.object).toBe(false);
  expect(raw.record).toBeUndefined();
  expect((await call('GET', attachmentsOf(externalId), { apiKey })).body).toEqual({ attachments: [] });
  expectProblem(await call('GET', `${attachmentsOf(externalId)}/${attachmentId}`, { apiKey }), 404);
};

describe('half-way failures of a direct upload leave nothing that points nowhere', () => {
  it('object written, metadata not made available → object and record removed', async () => {
    const externalId = await newRequest(apiKey);
    let attachmentId = '';
    const service = serviceWith({
      store: {
        update: once('mark available', dynamoAttachmentStore.update, (record) => {
          attachmentId = record.attachmentId;
          return record.status === 'available';
        }),
      },
    });
    await expect(service.upload(tenant.clientId, externalId, file())).rejects.toThrow(InjectedFailure);
    await expectNothingLeft(externalId, attachmentId);
  });

  it('object stored but its write reported failed (e.g. a timeout after S3 committed) → both removed', async () => {
    const externalId = await newRequest(apiKey);
    const created = recordingCreate();
    const service = serviceWith({
      store: { create: created.create },
      objects: {
        put: async (...args) => {
          await s3ObjectStorage.put(...args);
          throw new InjectedFailure('put response lost');
        },
      },
    });
    await expect(service.upload(tenant.clientId, externalId, file())).rejects.toThrow(InjectedFailure);
    await expectNothingLeft(externalId, created.attachmentId);
  });

  it('metadata written, object write failed → record removed', async () => {
    const externalId = await newRequest(apiKey);
    const created = recordingCreate();
    const service = serviceWith({
      store: { create: created.create },
      objects: { put: always('put') },
    });
    await expect(service.upload(tenant.clientId, externalId, file())).rejects.toThrow(InjectedFailure);
    await expectNothingLeft(externalId, created.attachmentId);
  });

  it('clean-up failing too (as if the function died) → the S3 event handler finishes the upload: available, exact bytes', async () => {
    const externalId = await newRequest(apiKey);
    const input = file();
    const service = serviceWith({
      store: { update: once('mark available', dynamoAttachmentStore.update, (r) => r.status === 'available') },
      objects: { deleteAllVersions: always('clean-up') },
    });
    await expect(service.upload(tenant.clientId, externalId, input)).rejects.toThrow(InjectedFailure);
    const record = await onlyRecord(externalId);
    const shown = await eventually(async () => {
      const res = await call('GET', `${attachmentsOf(externalId)}/${record.attachmentId}`, { apiKey });
      return res.status === 200 && res;
    });
    expect(shown.body).toMatchObject({ status: 'available', size: input.bytes.length, sha256: sha256(input.bytes) });
    expect((await download(apiKey, externalId, record.attachmentId)).bytes?.equals(input.bytes)).toBe(true);
  });

  it('object never written and record clean-up failing → record invisible, then swept after its deadline', async () => {
    const externalId = await newRequest(apiKey);
    const service = serviceWith({ objects: { put: always('put') }, store: { delete: always('clean-up') } });
    await expect(service.upload(tenant.clientId, externalId, file())).rejects.toThrow(InjectedFailure);
    const record = await onlyRecord(externalId);
    expect(record.status).toBe('pending');
    // Invisible from the start: a direct upload exists for clients only once available.
    expect((await call('GET', attachmentsOf(externalId), { apiKey })).body).toEqual({ attachments: [] });
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${record.attachmentId}`, { apiKey }), 404);

    const beforeDeadline = serviceWith({});
    expect(await beforeDeadline.sweep(tenant.clientId, externalId)).toBe(0);
    const afterDeadline = serviceWith({}, () => new Date(Date.parse(record.expiresAt!) + 1000));
    expect(await afterDeadline.sweep(tenant.clientId, externalId)).toBe(1);
    await expectNothingLeft(externalId, record.attachmentId);
  });

  it('a new upload to the request sweeps such left-overs', async () => {
    const externalId = await newRequest(apiKey);
    const broken = serviceWith({ objects: { put: always('put') }, store: { delete: always('clean-up') } });
    await expect(broken.upload(tenant.clientId, externalId, file())).rejects.toThrow(InjectedFailure);
    const stale = await onlyRecord(externalId);
    const later = serviceWith({}, () => new Date(Date.parse(stale.expiresAt!) + 1000));
    const fresh = await later.upload(tenant.clientId, externalId, file());
    const records = await dynamoAttachmentStore.listByRequest(tenant.clientId, externalId);
    expect(records.map((r) => r.attachmentId)).toEqual([fresh.attachmentId]);
  });
});

/**
 * An available attachment whose S3 event has been handled: made by the presigned flow, whose
 * verifier's last step is the visible change to `available`, so no event for it is still in flight
 * (the verifier would otherwise finish the deletion under test: right, but not what is tested).
 */
const verifiedAttachment = async (externalId: string) => {
  const bytes = sample.pdf(20_000);
  const { record, upload } = await serviceWith({}).requestUpload(tenant.clientId, externalId, {
    fileName: 'x.pdf',
    contentType: 'application/pdf',
    size: bytes.length,
    sha256: sha256(bytes),
  });
  expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes })).status).toBe(200);
  return eventually(async () => {
    const current = await dynamoAttachmentStore.get(tenant.clientId, externalId, record.attachmentId);
    return current?.status === 'available' && current;
  });
};

describe('the attachment slots through half-way failures', () => {
  const slotIds = async (externalId: string) =>
    Object.keys((await dynamoAttachmentStore.getSlots(tenant.clientId, externalId))?.slots ?? {});

  it('record write failing after the slot was taken → the slot is given back', async () => {
    const externalId = await newRequest(apiKey);
    const service = serviceWith({ store: { create: always('create record') } });
    await expect(service.upload(tenant.clientId, externalId, file())).rejects.toThrow(InjectedFailure);
    expect(await slotIds(externalId)).toEqual([]);
    expect(await dynamoAttachmentStore.listByRequest(tenant.clientId, externalId)).toEqual([]);
  });

  it('an upload compensated after its record was written → record and slot both gone', async () => {
    const externalId = await newRequest(apiKey);
    const created = recordingCreate();
    const service = serviceWith({ store: { create: created.create }, objects: { put: always('put') } });
    await expect(service.upload(tenant.clientId, externalId, file())).rejects.toThrow(InjectedFailure);
    await expectNothingLeft(externalId, created.attachmentId);
    expect(await slotIds(externalId)).toEqual([]);
  });

  it('slot release failing after a deletion → the deletion still succeeds; the slot is left to be reclaimed', async () => {
    const externalId = await newRequest(apiKey);
    const record = await verifiedAttachment(externalId);
    expect(await slotIds(externalId)).toEqual([record.attachmentId]);
    const service = serviceWith({ store: { releaseSlot: always('release slot') } });
    await service.remove(tenant.clientId, externalId, record.attachmentId);
    await expectNothingLeft(externalId, record.attachmentId);
    // Leaked, not lost: it only ever makes the limit stricter, until admit reclaims it (attachments-limit.test.ts).
    expect(await slotIds(externalId)).toEqual([record.attachmentId]);
  });

  it('a slot given back twice is freed once', async () => {
    const externalId = await newRequest(apiKey);
    const service = serviceWith({});
    const released = await service.upload(tenant.clientId, externalId, file());
    const kept = await service.upload(tenant.clientId, externalId, file());
    const at = new Date().toISOString();
    await dynamoAttachmentStore.releaseSlot(tenant.clientId, externalId, released.attachmentId, at);
    await dynamoAttachmentStore.releaseSlot(tenant.clientId, externalId, released.attachmentId, at);
    expect(await slotIds(externalId)).toEqual([kept.attachmentId]);
  });
});

describe('half-way failures of a deletion', () => {
  it('object deletion fails → attachment already gone for clients; the next DELETE finishes', async () => {
    const externalId = await newRequest(apiKey);
    const service = serviceWith({ objects: { deleteAllVersions: always('delete object') } });
    const record = await verifiedAttachment(externalId);
    await expect(service.remove(tenant.clientId, externalId, record.attachmentId)).rejects.toThrow(InjectedFailure);

    const raw = await stored(tenant.clientId, externalId, record.attachmentId);
    expect(raw.record?.status).toBe('deleting');
    expect(raw.object).toBe(true);
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${record.attachmentId}`, { apiKey }), 404);
    expect((await download(apiKey, externalId, record.attachmentId)).status).toBe(404);
    expect((await call('GET', attachmentsOf(externalId), { apiKey })).body).toEqual({ attachments: [] });

    expect((await call('DELETE', `${attachmentsOf(externalId)}/${record.attachmentId}`, { apiKey })).status).toBe(204);
    await expectNothingLeft(externalId, record.attachmentId);
  });

  it('object deleted, record deletion fails → invisible, and swept', async () => {
    const externalId = await newRequest(apiKey);
    const service = serviceWith({ store: { delete: always('delete record') } });
    const record = await verifiedAttachment(externalId);
    await expect(service.remove(tenant.clientId, externalId, record.attachmentId)).rejects.toThrow(InjectedFailure);
    const raw = await stored(tenant.clientId, externalId, record.attachmentId);
    expect(raw.object).toBe(false);
    expect(raw.record?.status).toBe('deleting');
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${record.attachmentId}`, { apiKey }), 404);
    expect(await serviceWith({}).sweep(tenant.clientId, externalId)).toBe(1);
    await expectNothingLeft(externalId, record.attachmentId);
  });
});

describe('presigned uploads that never complete', () => {
  it('past its deadline a pending upload is invisible, and a late file is deleted with its record', async () => {
    const externalId = await newRequest(apiKey);
    const bytes = sample.pdf(10_000);
    const twoHoursAgo = () => new Date(Date.now() - 2 * 60 * 60 * 1000);
    const { record, upload } = await serviceWith({}, twoHoursAgo).requestUpload(tenant.clientId, externalId, {
      fileName: 'late.pdf',
      contentType: 'application/pdf',
      size: bytes.length,
      sha256: sha256(bytes),
    });
    expectProblem(await call('GET', `${attachmentsOf(externalId)}/${record.attachmentId}`, { apiKey }), 404);
    expect((await call('GET', attachmentsOf(externalId), { apiKey })).body).toEqual({ attachments: [] });

    const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
    expect(put.status).toBe(200);
    await expectNothingLeft(externalId, record.attachmentId);
  });
});
