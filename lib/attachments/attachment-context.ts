import { randomUUID } from 'node:crypto';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { NotFound } from '#lib/errors';
import type { RequestStore } from '#lib/requests/request-store';
import type { StorageQuotas } from '#lib/tenancy/storage-quotas';
import { isVisible } from './attachment.ts';
import type { AttachmentStore } from './attachment-store.ts';
import type { ObjectStorage } from './object-storage.ts';

export interface AttachmentServiceDependencies {
  requests: Pick<RequestStore, 'get'>;
  store: AttachmentStore;
  objects: ObjectStorage;
  /** The client's attachment bytes quota: a record's declared size is counted while the record exists. */
  quotas: Pick<StorageQuotas, 'reserveAttachmentBytes' | 'releaseAttachmentBytes'>;
  now?: () => Date;
  newId?: () => string;
}

/** The dependencies with their defaults filled in: what every attachment use case is given first. */
export type AttachmentContext = Required<AttachmentServiceDependencies>;

export function contextOf(deps: AttachmentServiceDependencies): AttachmentContext {
  return { ...deps, now: deps.now ?? (() => new Date()), newId: deps.newId ?? randomUUID };
}

export const idsOf = (record: AttachmentRecord) => [record.clientId, record.externalId, record.attachmentId] as const;

export async function requireRequest(ctx: AttachmentContext, clientId: string, externalId: string): Promise<void> {
  if (!(await ctx.requests.get(clientId, externalId))) throw new NotFound(`Request ${externalId}`);
}

export async function findVisible(
  ctx: AttachmentContext,
  clientId: string,
  externalId: string,
  attachmentId: string,
): Promise<AttachmentRecord> {
  await requireRequest(ctx, clientId, externalId);
  const record = await ctx.store.get(clientId, externalId, attachmentId);
  if (!record || !isVisible(record, ctx.now())) throw new NotFound(`Attachment ${attachmentId}`);
  return record;
}

/** The record's next version with `changes`, written conditionally on the version read. */
export async function transition(
  ctx: AttachmentContext,
  record: AttachmentRecord,
  changes: Partial<AttachmentRecord>,
): Promise<AttachmentRecord> {
  const next: AttachmentRecord = {
    ...record,
    ...changes,
    version: record.version + 1,
    updatedAt: ctx.now().toISOString(),
  };
  await ctx.store.update(next);
  return next;
}
