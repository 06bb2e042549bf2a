import { createHash } from 'node:crypto';
import { retryOnConflict } from '#lib/concurrency';
import type { AttachmentRecord } from '#lib/entities/attachment';
import { keys } from '#lib/object-keys';
import { log } from '#lib/observability/logger';
import { isSweepable } from './attachment.ts';
import { type AttachmentContext, transition } from './attachment-context.ts';
import { MAX_ATTEMPTS } from './attachment-limits.ts';
import { deleteRecord } from './attachment-removal.ts';
import { ALLOWED_TYPES, SNIFF_BYTES } from './content-policy.ts';
import type { StoredObject } from './object-storage.ts';

export type VerifyOutcome = 'ignored' | 'discarded' | 'missing' | 'available' | 'rejected';

/** What the verifier found: the object's size and SHA-256 (as stored or as read) and its first bytes. */
interface Measured {
  size: number;
  /** Undefined when the size alone decides (it is not the declared one), unread. */
  sha256: string | undefined;
  head: Uint8Array;
}

/** Streams the object once: size (stopping as soon as it exceeds `expectedSize`), SHA-256, first bytes. */
async function streamed(
  ctx: AttachmentContext,
  objectKey: string,
  expectedSize: number,
): Promise<Measured | undefined> {
  const stream = await ctx.objects.read(objectKey);
  if (!stream) return undefined;
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headBytes = 0;
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > expectedSize) return { size, sha256: undefined, head: Buffer.concat(head) };
    hash.update(chunk);
    if (headBytes < SNIFF_BYTES) {
      const part = Buffer.from(chunk.subarray(0, SNIFF_BYTES - headBytes));
      head.push(part);
      headBytes += part.length;
    }
  }
  return { size, sha256: hash.digest('hex'), head: Buffer.concat(head) };
}

/**
 * What verifying costs is what the store can vouch for. Its size, always, and a size other than the
 * declared one is decided there; a SHA-256 the store verified when the object was written (S3) leaves
 * only the first bytes to read, for the type: time and bytes read are the same for 1 MB and 1 GiB.
 * A store that cannot vouch for one (the local emulator) has the object streamed and hashed once.
 */
async function measure(
  ctx: AttachmentContext,
  objectKey: string,
  record: AttachmentRecord,
): Promise<Measured | undefined> {
  const stored: StoredObject | undefined = await ctx.objects.describe(objectKey);
  if (!stored) return undefined;
  if (stored.size !== record.size) return { size: stored.size, sha256: undefined, head: new Uint8Array() };
  if (stored.sha256 === undefined) return streamed(ctx, objectKey, record.size);
  const head = await ctx.objects.readPrefix(objectKey, SNIFF_BYTES);
  return head && { size: stored.size, sha256: stored.sha256, head };
}

/**
 * Already verified, and the object cannot have changed since: a direct upload's bytes were hashed and
 * type-checked by its handler before it wrote them (no URL is ever issued for its key), and an object
 * in a store that verifies checksums can only be replaced by bytes of the same SHA-256.
 */
function alreadyVerified(ctx: AttachmentContext, record: AttachmentRecord): boolean {
  return record.status === 'available' && (record.uploadMethod === 'direct' || ctx.objects.verifiesChecksums);
}

/** Why a stored object is not the declared file, in words fit for clients (no file data); undefined when it is. */
function mismatchOf(record: AttachmentRecord, measured: Measured): string | undefined {
  if (measured.size > record.size) return `The uploaded file is larger than the declared ${record.size} bytes.`;
  if (measured.size !== record.size) {
    return `The uploaded file has ${measured.size} bytes; ${record.size} were declared.`;
  }
  if (measured.sha256 !== record.sha256) return 'The uploaded file does not have the declared SHA-256.';
  const type = ALLOWED_TYPES.find((candidate) => candidate.mediaType === record.contentType);
  if (type && !type.matches(measured.head)) return `The uploaded file's content is not a ${type.label}.`;
  return undefined;
}

/** One judgement of the object against its record as stored now; a lost race throws VersionConflict. */
async function judge(
  ctx: AttachmentContext,
  objectKey: string,
  ids: { clientId: string; externalId: string; attachmentId: string },
): Promise<VerifyOutcome> {
  const record = await ctx.store.get(ids.clientId, ids.externalId, ids.attachmentId);
  if (!record || record.status === 'rejected' || isSweepable(record, ctx.now())) {
    await ctx.objects.deleteAllVersions(objectKey);
    if (record && record.status !== 'rejected') await deleteRecord(ctx, record);
    log.info('Attachment object discarded', { attachmentId: ids.attachmentId, status: record?.status ?? 'none' });
    return 'discarded';
  }
  if (alreadyVerified(ctx, record)) {
    // Nothing read: its bytes were checked at upload, or by a store that verifies checksums.
    log.info('Attachment already verified', { attachmentId: ids.attachmentId, method: record.uploadMethod });
    return 'available';
  }
  const measured = await measure(ctx, objectKey, record);
  if (!measured) return 'missing';
  const reason = mismatchOf(record, measured);
  if (!reason) {
    if (record.status !== 'available') await transition(ctx, record, { status: 'available', expiresAt: undefined });
    log.info('Attachment verified', { attachmentId: ids.attachmentId, method: record.uploadMethod });
    return 'available';
  }
  await ctx.objects.deleteAllVersions(objectKey);
  await transition(ctx, record, { status: 'rejected', rejectionReason: reason, expiresAt: undefined });
  log.warn('Attachment rejected', { attachmentId: ids.attachmentId, method: record.uploadMethod });
  return 'rejected';
}

/**
 * An object arrived (S3 ObjectCreated, either flow): compare it with its record. Matching → available;
 * different → object deleted, record rejected with the reason; no live record → object deleted.
 * Idempotent, and safe against concurrent uploads, deletions and repeated events.
 */
export async function verifyObject(ctx: AttachmentContext, objectKey: string): Promise<VerifyOutcome> {
  const ids = keys.attachmentObjectIds(objectKey);
  if (!ids) return 'ignored';
  // A concurrent upload, deletion or event changed the record: judge again from what is stored now.
  return retryOnConflict(() => judge(ctx, objectKey, ids), { attempts: MAX_ATTEMPTS });
}
