import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { attachmentService } from '#lib/attachments/attachments';
import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { s3 } from '#lib/aws/s3';
import { bucketName } from '#lib/config/resources';
import { keys } from '#lib/object-keys';
import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { dynamoStorageUsageStore } from '#lib/tenancy/dynamo-storage-usage-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { provisioning } from '#lib/tenancy/provisioning';
import { dynamoStorageQuotas } from '#lib/tenancy/storage-quotas-service';
import { call, newTenant, uniqueId } from '#test/support/api';
import { portalAccountReplacementOf } from '#test/support/fixtures';
import { attachmentsOf, expectProblem, newRequest, sample, sha256, upload } from './attachments-support.ts';

/**
 * Storage quotas (docs/security.md, "Quotas"): the bytes of a client's attachments and the portal
 * accounts of each organization, counted by one conditional write each, so a refused upload or
 * account leaves nothing stored and concurrent creates never pass the quota.
 */
const admin = provisioning(dynamoTenantStore);
type Tenant = Awaited<ReturnType<typeof newTenant>>;

const tenantWithQuotas = async (
  label: string,
  quotas: { attachmentBytesQuota?: number; portalAccountsQuota?: number },
) => {
  const tenant = await newTenant(label);
  await admin.setStorageQuotas(tenant.clientId, quotas);
  return tenant;
};

const bytesUsed = async (clientId: string) =>
  (await dynamoStorageUsageStore.getAttachmentBytes(clientId))?.attachmentBytes;
const objectsOf = async (clientId: string, externalId: string) =>
  (
    await s3.send(
      new ListObjectsV2Command({ Bucket: bucketName(), Prefix: keys.attachmentObject(clientId, externalId, '') }),
    )
  ).KeyCount ?? 0;
const recordsOf = async (clientId: string, externalId: string) =>
  (await dynamoAttachmentStore.listByRequest(clientId, externalId)).length;

const pdf = (size: number) => ({ fileName: 'labs.pdf', contentType: 'application/pdf', bytes: sample.pdf(size) });

describe('attachment bytes per client', () => {
  it('refuses an upload past the quota with 409 and nothing stored; a deletion frees its bytes', async () => {
    const tenant = await tenantWithQuotas('bytes-quota', { attachmentBytesQuota: 10_000 });
    const externalId = await newRequest(tenant.apiKey);
    const first = await upload(tenant.apiKey, externalId, pdf(4096));
    expect(first.status, first.text).toBe(201);
    expect((await upload(tenant.apiKey, externalId, pdf(4096))).status).toBe(201);
    expect(await bytesUsed(tenant.clientId)).toBe(8192);

    const refused = await upload(tenant.apiKey, externalId, pdf(4096));
    expectProblem(refused, 409);
    expect(refused.body.detail).toBe(
      "Storing 4096 more bytes would exceed this client's attachment storage quota of 10000 bytes; delete attachments to make room.",
    );
    expect(refused.body).toMatchObject({ quota: 'attachmentBytes', limit: 10_000 });
    expect(await recordsOf(tenant.clientId, externalId)).toBe(2);
    expect(await objectsOf(tenant.clientId, externalId)).toBe(2);
    expect((await dynamoAttachmentStore.getSlots(tenant.clientId, externalId))?.slots).toHaveProperty(
      first.body.attachmentId,
    );
    expect(Object.keys((await dynamoAttachmentStore.getSlots(tenant.clientId, externalId))!.slots)).toHaveLength(2);
    expect(await bytesUsed(tenant.clientId)).toBe(8192);

    // What fits still fits.
    expect((await upload(tenant.apiKey, externalId, pdf(1808))).status).toBe(201);
    expect(await bytesUsed(tenant.clientId)).toBe(10_000);

    const deleted = await call('DELETE', `${attachmentsOf(externalId)}/${first.body.attachmentId}`, {
      apiKey: tenant.apiKey,
    });
    expect(deleted.status, deleted.text).toBe(204);
    expect(await bytesUsed(tenant.clientId)).toBe(10_000 - 4096);
    expect((await upload(tenant.apiKey, externalId, pdf(4096))).status).toBe(201);
  });

  it('counts the whole client, across its requests', async () => {
    const tenant = await tenantWithQuotas('bytes-quota-requests', { attachmentBytesQuota: 5000 });
    const [one, two] = [await newRequest(tenant.apiKey), await newRequest(tenant.apiKey)];
    expect((await upload(tenant.apiKey, one, pdf(3000))).status).toBe(201);
    expectProblem(await upload(tenant.apiKey, two, pdf(3000)), 409);
    expect(await recordsOf(tenant.clientId, two)).toBe(0);
  });

  it('reserves the declared size of a presigned upload, and gives it back when the upload is deleted', async () => {
    const tenant = await tenantWithQuotas('bytes-quota-presigned', { attachmentBytesQuota: 10_000 });
    const externalId = await newRequest(tenant.apiKey);
    const declare = (size: number) => {
      const bytes = sample.pdf(size);
      return call('POST', attachmentsOf(externalId), {
        apiKey: tenant.apiKey,
        body: { fileName: 'scan.pdf', contentType: 'application/pdf', size, sha256: sha256(bytes) },
      });
    };
    const declared = await declare(6000);
    expect(declared.status, declared.text).toBe(201);
    expect(await bytesUsed(tenant.clientId)).toBe(6000);
    // Nothing uploaded yet, but the declared size holds its room.
    expectProblem(await declare(6000), 409);
    expect(await recordsOf(tenant.clientId, externalId)).toBe(1);

    const cancelled = await call('DELETE', `${attachmentsOf(externalId)}/${declared.body.attachmentId}`, {
      apiKey: tenant.apiKey,
    });
    expect(cancelled.status, cancelled.text).toBe(204);
    expect(await bytesUsed(tenant.clientId)).toBe(0);
    expect((await declare(6000)).status).toBe(201);
  });

  it('gives back the bytes of a failed upload, and those of a deleted attachment once however many deletions race', async () => {
    const tenant = await tenantWithQuotas('bytes-quota-failures', { attachmentBytesQuota: 10_000 });
    const externalId = await newRequest(tenant.apiKey);
    const failing = attachmentService({
      requests: dynamoRequestStore,
      store: dynamoAttachmentStore,
      objects: {
        ...s3ObjectStorage,
        put: async () => {
          throw new Error('injected: the object write failed');
        },
      },
      quotas: dynamoStorageQuotas,
    });
    const bytes = sample.pdf(3000);
    await expect(
      failing.upload(tenant.clientId, externalId, { fileName: 'labs.pdf', mediaType: 'application/pdf', bytes }),
    ).rejects.toThrow('injected');
    expect(await bytesUsed(tenant.clientId)).toBe(0);
    expect(await recordsOf(tenant.clientId, externalId)).toBe(0);

    const stored = await upload(tenant.apiKey, externalId, pdf(3000));
    expect(stored.status, stored.text).toBe(201);
    const deletions = await Promise.all(
      Array.from({ length: 4 }, () =>
        call('DELETE', `${attachmentsOf(externalId)}/${stored.body.attachmentId}`, { apiKey: tenant.apiKey }),
      ),
    );
    expect(deletions.map((res) => res.status)).toContain(204);
    expect(await bytesUsed(tenant.clientId)).toBe(0);
    expect((await upload(tenant.apiKey, externalId, pdf(3000))).status).toBe(201);
    expect(await bytesUsed(tenant.clientId)).toBe(3000);
  });

  it('never lets concurrent uploads pass the quota', async () => {
    const tenant = await tenantWithQuotas('bytes-quota-concurrent', { attachmentBytesQuota: 5 * 2048 });
    const externalId = await newRequest(tenant.apiKey);
    const responses = await Promise.all(Array.from({ length: 12 }, () => upload(tenant.apiKey, externalId, pdf(2048))));
    const statuses = responses.map((res) => res.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(7).fill(409)]);
    expect(await bytesUsed(tenant.clientId)).toBe(5 * 2048);
    expect(await recordsOf(tenant.clientId, externalId)).toBe(5);
    expect(await objectsOf(tenant.clientId, externalId)).toBe(5);
  });
});

const v11 = '/api/external/v1.1/Portals/accounts';
const accountBody = (clientUserId: string) => ({
  externalId: uniqueId('pacc'),
  clientUserId,
  portalId: 'sandbox',
  payerIds: ['SBX01'],
  username: 'jdoe@clinic.example',
  password: 'Portal-Pa55word!',
});
const createAccount = (tenant: Pick<Tenant, 'apiKey'>, clientUserId: string) =>
  call('POST', v11, { apiKey: tenant.apiKey, body: accountBody(clientUserId) });
const accountsCounted = async (clientId: string, organizationId: string) =>
  (await dynamoStorageUsageStore.getPortalAccounts(clientId, organizationId))?.portalAccounts;

/** A second organization of the tenant's client, with a client user. */
const secondOrganization = async (tenant: Tenant) => {
  const { organizationId } = await admin.createOrganization(tenant.clientId, 'second organization');
  const clientUserId = uniqueId('user');
  await admin.createClientUser(tenant.clientId, organizationId, clientUserId);
  return { organizationId, clientUserId };
};

describe('portal accounts per organization', () => {
  it('refuses an account past the quota with 409 and nothing stored, per organization; a deletion frees one', async () => {
    const tenant = await tenantWithQuotas('accounts-quota', { portalAccountsQuota: 2 });
    const first = await createAccount(tenant, tenant.clientUserId);
    expect(first.status, first.text).toBe(201);
    expect((await createAccount(tenant, tenant.clientUserId)).status).toBe(201);

    const body = accountBody(tenant.clientUserId);
    const refused = await call('POST', v11, { apiKey: tenant.apiKey, body });
    expectProblem(refused, 409);
    expect(refused.body.detail).toBe(
      'This organization already has 2 portal accounts, the most it may have; delete one to add another.',
    );
    expect(await dynamoPortalAccountStore.get(tenant.clientId, body.externalId)).toBeUndefined();
    expect(await accountsCounted(tenant.clientId, tenant.organizationId)).toBe(2);

    // Another organization of the same client has its own count.
    const other = await secondOrganization(tenant);
    expect((await createAccount(tenant, other.clientUserId)).status).toBe(201);

    const deleted = await call('DELETE', `${v11}/${first.body.externalId}`, {
      apiKey: tenant.apiKey,
    });
    expect(deleted.status, deleted.text).toBe(204);
    expect(await accountsCounted(tenant.clientId, tenant.organizationId)).toBe(1);
    expect((await createAccount(tenant, tenant.clientUserId)).status).toBe(201);
  });

  it('never lets concurrent creates pass the quota', async () => {
    const tenant = await tenantWithQuotas('accounts-quota-concurrent', { portalAccountsQuota: 3 });
    const responses = await Promise.all(Array.from({ length: 10 }, () => createAccount(tenant, tenant.clientUserId)));
    expect(responses.map((res) => res.status).sort()).toEqual([...Array(3).fill(201), ...Array(7).fill(409)]);
    expect(await accountsCounted(tenant.clientId, tenant.organizationId)).toBe(3);
    const listed = await call('GET', `${v11}/${tenant.clientUserId}/list?pageSize=100`, { apiKey: tenant.apiKey });
    expect(listed.body.items).toHaveLength(3);
  });

  it('counts a moved account in its new organization, refusing the move when that one is full', async () => {
    const tenant = await tenantWithQuotas('accounts-quota-move', { portalAccountsQuota: 1 });
    const other = await secondOrganization(tenant);
    const kept = await createAccount(tenant, tenant.clientUserId);
    const moving = await createAccount(tenant, other.clientUserId);
    expect([kept.status, moving.status]).toEqual([201, 201]);
    const externalId = moving.body.externalId;
    const move = () =>
      call('PUT', `${v11}/${externalId}`, {
        apiKey: tenant.apiKey,
        body: portalAccountReplacementOf(moving.body, {
          clientUserId: tenant.clientUserId,
          password: 'Portal-Pa55word!',
        }),
      });
    expectProblem(await move(), 409);
    expect((await dynamoPortalAccountStore.get(tenant.clientId, externalId))?.organizationId).toBe(
      other.organizationId,
    );

    const keptId = kept.body.externalId;
    expect((await call('DELETE', `${v11}/${keptId}`, { apiKey: tenant.apiKey })).status).toBe(204);
    const moved = await move();
    expect(moved.status, moved.text).toBe(200);
    expect(await accountsCounted(tenant.clientId, tenant.organizationId)).toBe(1);
    expect(await accountsCounted(tenant.clientId, other.organizationId)).toBe(0);
  });
});
