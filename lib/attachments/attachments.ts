import { createHash, randomUUID } from 'node:crypto';
import { retryOnConflict, VersionConflict } from '#lib/concurrency';
import type { AttachmentRecord, UploadMethod } from '#lib/entities/attachment';
import { Conflict, Invalid, LimitReached, NotFound } from '#lib/errors';
import { keys } from '#lib/keys';
import { log } from '#lib/observability/logger';
import type { RequestStore } from '#lib/requests/request-store';
import type { StorageQuotas } from '#lib/tenancy/storage-quotas';
import { isSweepable, isVisible } from './attachment.ts';
import { reconciledSlots, sweepDue } from './attachment-slots.ts';
import type { AttachmentStore } from './attachment-store.ts';
import {
  ALLOWED_TYPES,
  assertContentMatches,
  assertSize,
  cleanFileName,
  fileNameFor,
  MAX_DIRECT_FILE_BYTES,
  MAX_PRESIGNED_FILE_BYTES,
  resolveType,
  SNIFF_BYTES,
  servedContentType,
} from './content-policy.ts';
import type { ObjectStorage, PresignedRequest, StoredObject } from './object-storage.ts';
import type { Descriptive, DirectUpload, PresignedUploadRequest } from './upload-input.ts';

/** How long a direct upload may take between its record and its object before it counts as abandoned. */
export const DIRECT_UPLOAD_DEADLINE_SECONDS = 5 * 60;
/** Lifetime of a presigned upload URL. */
export const UPLOAD_URL_SECONDS = 15 * 60;
/** After the URL expires, time for an upload that started in time to finish and be verified. */
export const UPLOAD_GRACE_SECONDS = 60 * 60;
/** Lifetime of a download URL: the client follows the redirect at once. */
export const DOWNLOAD_URL_SECONDS = 60;
/** Keeps a request's list well inside Lambda's 6 MB response; held by the request's slots (attachment-slots.ts). */
export const MAX_ATTACHMENTS_PER_REQUEST = 100;

export interface AttachmentServiceDependencies {
  requests: Pick<RequestStore, 'get'>;
  store: AttachmentStore;
  objects: ObjectStorage;
  /** The client's attachment bytes quota: a record's declared size is counted while the record exists. */
  quotas: Pick<StorageQuotas, 'reserveAttachmentBytes' | 'releaseAttachmentBytes'>;
  now?: () => Date;
  newId?: () => string;
}

export type VerifyOutcome = 'ignored' | 'discarded' | 'missing' | 'available' | 'rejected';

/** What the verifier found: the object's size and SHA-256 (as stored or as read) and its first bytes. */
interface Measured {
  size: number;
  /** Undefined when the size alone decides (it is not the declared one), unread. */
  sha256: string | undefined;
  head: Uint8Array;
}

const idsOf = (record: AttachmentRecord) => [record.clientId, record.externalId, record.attachmentId] as const;
const later = (from: Date, seconds: number) => new Date(from.getTime() + seconds * 1000).toISOString();
const MAX_ATTEMPTS = 3;

/**
 * Attachment use cases, independent of HTTP and of AWS. The record is written before the object,
 * and becomes `available` only once the object is in place and verified; any failure in between
 * removes what was written (object first, then record). If even that fails, the record is left
 * `pending` with a deadline: invisible to clients once past it, and swept with its object.
 */
export const attachmentService = (deps: AttachmentServiceDependencies) => {
  const { store, objects, quotas } = deps;
  const now = deps.now ?? (() => new Date());
  const newId = deps.newId ?? randomUUID;

  const requireRequest = async (clientId: string, externalId: string) => {
    if (!(await deps.requests.get(clientId, externalId))) throw new NotFound(`Request ${externalId}`);
  };

  const findVisible = async (clientId: string, externalId: string, attachmentId: string) => {
    await requireRequest(clientId, externalId);
    const record = await store.get(clientId, externalId, attachmentId);
    if (!record || !isVisible(record, now())) throw new NotFound(`Attachment ${attachmentId}`);
    return record;
  };

  const transition = async (record: AttachmentRecord, changes: Partial<AttachmentRecord>) => {
    const next: AttachmentRecord = {
      ...record,
      ...changes,
      version: record.version + 1,
      updatedAt: now().toISOString(),
    };
    await store.update(next);
    return next;
  };

  /**
   * Gives back the slot of an attachment whose record is gone (or was never written), and with it the
   * record's bytes: only the release that freed the slot gives them back, so bytes are returned once
   * however many clean-ups race. A failure is only logged: the slot is then reclaimed when the request
   * next runs out of slots (admit); its bytes stay counted (docs/security.md, "Quotas").
   */
  const releaseSlot = async (record: AttachmentRecord) => {
    const freed = await store.releaseSlot(...idsOf(record), now().toISOString()).catch((error: Error) => {
      log.error('Attachment slot release failed; it will be reclaimed', {
        attachmentId: record.attachmentId,
        errorName: error?.name,
      });
      return false;
    });
    if (freed) await quotas.releaseAttachmentBytes(record.clientId, record.size);
  };

  /** The record, then its slot: a failure in between leaves a slot taken too long, never one too few. */
  const deleteRecord = async (record: AttachmentRecord) => {
    await store.delete(...idsOf(record));
    await releaseSlot(record);
  };

  /** Object first (every version), then the record: a failure in between leaves a record that leads to the object. */
  const discard = async (record: AttachmentRecord) => {
    await objects.deleteAllVersions(record.objectKey);
    await deleteRecord(record);
  };

  const discardOrLog = (record: AttachmentRecord, context: string) =>
    discard(record).catch((error: Error) =>
      log.error('Attachment clean-up failed; the sweep will retry', {
        context,
        attachmentId: record.attachmentId,
        status: record.status,
        errorName: error?.name,
      }),
    );

  /** Removes a request's left-overs (interrupted uploads and deletions). Best effort; returns how many went. */
  const sweep = async (clientId: string, externalId: string) => {
    const at = now();
    const dead = (await store.listByRequest(clientId, externalId)).filter((r) => isSweepable(r, at));
    for (const record of dead) await discardOrLog(record, 'sweep');
    return dead.length;
  };

  /**
   * Brings the request's slots in line with its records (attachment-slots.ts): set up for its first
   * upload or for records from before slots, and reclaimed from functions that died between the two
   * writes. The write is conditional on the version read; losing that race is fine (someone else wrote).
   */
  const reconcileSlots = async (clientId: string, externalId: string) => {
    const current = await store.getSlots(clientId, externalId);
    const records = await store.listByRequest(clientId, externalId);
    const next = reconciledSlots({ clientId, externalId }, current, records, now());
    if (!next) return;
    if (current) {
      log.warn('Attachment slots reconciled', { taken: Object.keys(current.slots).length, records: records.length });
    }
    await store.putSlots(next).catch((error: unknown) => {
      if (!(error instanceof VersionConflict)) throw error;
    });
  };

  /** Notes when the request was swept; only a hint for the next upload, so a failure is only logged. */
  const markSwept = (clientId: string, externalId: string, at: Date) =>
    store
      .markSwept(clientId, externalId, at.toISOString())
      .catch((error: Error) => log.warn('Attachment sweep time not recorded', { errorName: error?.name }));

  /**
   * Before a new record: take the record's slot, which fails atomically once the request has all it
   * may have. The slots item answers, so an upload reads no other record. A refusal stands only once the
   * request's left-overs are swept and the slots checked against the records (they may be missing or
   * may have drifted); otherwise left-overs are swept at most every SWEEP_INTERVAL_SECONDS.
   */
  const admit = async (record: AttachmentRecord) => {
    const { clientId, externalId, attachmentId } = record;
    const reserve = () =>
      store.reserveSlot(clientId, externalId, attachmentId, now().toISOString(), MAX_ATTACHMENTS_PER_REQUEST);
    const reservation = await reserve();
    const sweptAt = now();
    if (reservation.taken) {
      if (!sweepDue(reservation.sweptAt, sweptAt)) return;
      await sweep(clientId, externalId);
      await markSwept(clientId, externalId, sweptAt);
      return;
    }
    // Swept first, so that left-overs give their slots back; the slots item exists once reconciled.
    await sweep(clientId, externalId);
    await reconcileSlots(clientId, externalId);
    await markSwept(clientId, externalId, sweptAt);
    if ((await reserve()).taken) return;
    throw new LimitReached(
      `Request ${externalId} already has ${MAX_ATTACHMENTS_PER_REQUEST} attachments, the most it may have.`,
    );
  };

  /**
   * Takes the record's slot and its declared bytes (refused at the client's quota), then writes the
   * record; a record that could not be written gives both back.
   */
  const admitAndCreate = async (record: AttachmentRecord) => {
    await admit(record);
    try {
      await quotas.reserveAttachmentBytes(record.clientId, record.size);
    } catch (error) {
      // Not releaseSlot: that would give back bytes this record never took.
      await store.releaseSlot(...idsOf(record), now().toISOString()).catch(() => undefined);
      throw error;
    }
    try {
      await store.create(record);
    } catch (error) {
      await releaseSlot(record);
      throw error;
    }
  };

  /** The metadata both upload flows record: the cleaned name, the resolved type, size, digest, descriptions. */
  const fileOf = (
    cleanName: string,
    type: Parameters<typeof fileNameFor>[1],
    size: number,
    sha256: string,
    input: Descriptive,
  ) => ({
    fileName: fileNameFor(cleanName, type),
    contentType: type.mediaType,
    size,
    sha256,
    ...(input.documentType ? { documentType: input.documentType } : {}),
    ...(input.description ? { description: input.description } : {}),
  });

  const newRecord = (
    clientId: string,
    externalId: string,
    file: Descriptive & { fileName: string; contentType: string; size: number; sha256: string },
    uploadMethod: UploadMethod,
    deadlineSeconds: number,
  ): AttachmentRecord => {
    const at = now();
    const attachmentId = newId();
    return {
      clientId,
      externalId,
      attachmentId,
      objectKey: keys.attachmentObject(clientId, externalId, attachmentId),
      ...file,
      uploadMethod,
      status: 'pending',
      expiresAt: later(at, deadlineSeconds),
      version: 1,
      createdAt: at.toISOString(),
      updatedAt: at.toISOString(),
    };
  };

  /** Streams the object once: size (stopping as soon as it exceeds `expectedSize`), SHA-256, first bytes. */
  const streamed = async (objectKey: string, expectedSize: number): Promise<Measured | undefined> => {
    const stream = await objects.read(objectKey);
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
  };

  /**
   * What verifying costs is what the store can vouch for. Its size, always, and a size other than the
   * declared one is decided there; a SHA-256 the store verified when the object was written (S3) leaves
   * only the first bytes to read, for the type: time and bytes read are the same for 1 MB and 1 GiB.
   * A store that cannot vouch for one (the local emulator) has the object streamed and hashed once.
   */
  const measure = async (objectKey: string, record: AttachmentRecord): Promise<Measured | undefined> => {
    const stored: StoredObject | undefined = await objects.describe(objectKey);
    if (!stored) return undefined;
    if (stored.size !== record.size) return { size: stored.size, sha256: undefined, head: new Uint8Array() };
    if (stored.sha256 === undefined) return streamed(objectKey, record.size);
    const head = await objects.readPrefix(objectKey, SNIFF_BYTES);
    return head && { size: stored.size, sha256: stored.sha256, head };
  };

  /**
   * Already verified, and the object cannot have changed since: a direct upload's bytes were hashed and
   * type-checked by its handler before it wrote them (no URL is ever issued for its key), and an object
   * in a store that verifies checksums can only be replaced by bytes of the same SHA-256.
   */
  const alreadyVerified = (record: AttachmentRecord) =>
    record.status === 'available' && (record.uploadMethod === 'direct' || objects.verifiesChecksums);

  /** Why a stored object is not the declared file, in words fit for clients (no file data); undefined when it is. */
  const mismatchOf = (record: AttachmentRecord, measured: Measured) => {
    if (measured.size > record.size) return `The uploaded file is larger than the declared ${record.size} bytes.`;
    if (measured.size !== record.size) {
      return `The uploaded file has ${measured.size} bytes; ${record.size} were declared.`;
    }
    if (measured.sha256 !== record.sha256) return 'The uploaded file does not have the declared SHA-256.';
    const type = ALLOWED_TYPES.find((candidate) => candidate.mediaType === record.contentType);
    if (type && !type.matches(measured.head)) return `The uploaded file's content is not a ${type.label}.`;
    return undefined;
  };

  return {
    /** Direct upload: checked, stored and verified before the answer; the result is available. */
    upload: async (clientId: string, externalId: string, input: DirectUpload) => {
      await requireRequest(clientId, externalId);
      const cleanName = cleanFileName(input.fileName);
      const type = resolveType(input.mediaType, cleanName);
      assertSize(input.bytes.length, MAX_DIRECT_FILE_BYTES);
      assertContentMatches(type, input.bytes);
      const sha256 = createHash('sha256').update(input.bytes).digest('hex');
      if (input.sha256 !== undefined && input.sha256 !== sha256) {
        throw new Invalid('The file received does not have the SHA-256 given in the sha256 field.', {
          reason: 'sha256',
        });
      }
      const record = newRecord(
        clientId,
        externalId,
        fileOf(cleanName, type, input.bytes.length, sha256, input),
        'direct',
        DIRECT_UPLOAD_DEADLINE_SECONDS,
      );
      await admitAndCreate(record);
      try {
        await objects.put(record.objectKey, input.bytes, { contentType: type.mediaType, sha256 });
        let available: AttachmentRecord;
        try {
          available = await transition(record, { status: 'available', expiresAt: undefined });
        } catch (error) {
          // The upload verifier (S3 event) may have made it available first; that is success too.
          const current = error instanceof VersionConflict ? await store.get(...idsOf(record)) : undefined;
          if (current?.status !== 'available') throw error;
          available = current;
        }
        log.info('Attachment stored', { attachmentId: record.attachmentId, method: 'direct', size: record.size });
        return available;
      } catch (error) {
        await discardOrLog(record, 'direct upload');
        throw error;
      }
    },

    /** Presigned upload: the record waits (pending) for the client's PUT; the verifier settles it. */
    requestUpload: async (
      clientId: string,
      externalId: string,
      input: PresignedUploadRequest,
    ): Promise<{ record: AttachmentRecord; upload: PresignedRequest }> => {
      await requireRequest(clientId, externalId);
      const cleanName = cleanFileName(input.fileName);
      const type = resolveType(input.contentType, cleanName);
      assertSize(input.size, MAX_PRESIGNED_FILE_BYTES);
      const record = newRecord(
        clientId,
        externalId,
        fileOf(cleanName, type, input.size, input.sha256, input),
        'presigned',
        UPLOAD_URL_SECONDS + UPLOAD_GRACE_SECONDS,
      );
      await admitAndCreate(record);
      try {
        const upload = await objects.presignPut(record.objectKey, {
          contentType: record.contentType,
          size: record.size,
          sha256: record.sha256,
          expiresInSeconds: UPLOAD_URL_SECONDS,
        });
        log.info('Attachment upload issued', { attachmentId: record.attachmentId, size: record.size });
        return { record, upload };
      } catch (error) {
        await discardOrLog(record, 'presigned upload');
        throw error;
      }
    },

    /**
     * An object arrived (S3 ObjectCreated, either flow): compare it with its record. Matching → available;
     * different → object deleted, record rejected with the reason; no live record → object deleted.
     * Idempotent, and safe against concurrent uploads, deletions and repeated events.
     */
    verifyObject: async (objectKey: string): Promise<VerifyOutcome> => {
      const ids = keys.attachmentObjectIds(objectKey);
      if (!ids) return 'ignored';
      return retryOnConflict(
        async () => {
          const record = await store.get(ids.clientId, ids.externalId, ids.attachmentId);
          if (!record || record.status === 'rejected' || isSweepable(record, now())) {
            await objects.deleteAllVersions(objectKey);
            if (record && record.status !== 'rejected') await deleteRecord(record);
            log.info('Attachment object discarded', {
              attachmentId: ids.attachmentId,
              status: record?.status ?? 'none',
            });
            return 'discarded';
          }
          if (alreadyVerified(record)) {
            // Nothing read: its bytes were checked at upload, or by a store that verifies checksums.
            log.info('Attachment already verified', { attachmentId: ids.attachmentId, method: record.uploadMethod });
            return 'available';
          }
          const measured = await measure(objectKey, record);
          if (!measured) return 'missing';
          const reason = mismatchOf(record, measured);
          if (!reason) {
            if (record.status !== 'available') await transition(record, { status: 'available', expiresAt: undefined });
            log.info('Attachment verified', { attachmentId: ids.attachmentId, method: record.uploadMethod });
            return 'available';
          }
          await objects.deleteAllVersions(objectKey);
          await transition(record, { status: 'rejected', rejectionReason: reason, expiresAt: undefined });
          log.warn('Attachment rejected', { attachmentId: ids.attachmentId, method: record.uploadMethod });
          return 'rejected';
        },
        // A concurrent upload, deletion or event changed the record: judge again from what is stored now.
        { attempts: MAX_ATTEMPTS },
      );
    },

    list: async (clientId: string, externalId: string) => {
      await requireRequest(clientId, externalId);
      const at = now();
      return (await store.listByRequest(clientId, externalId))
        .filter((record) => isVisible(record, at))
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.attachmentId.localeCompare(b.attachmentId));
    },

    get: findVisible,

    /** A short-lived URL for the bytes; only an available attachment has bytes. */
    download: async (clientId: string, externalId: string, attachmentId: string) => {
      const record = await findVisible(clientId, externalId, attachmentId);
      if (record.status !== 'available') {
        throw new Conflict(
          `Attachment ${attachmentId} is ${record.status}: only an available attachment can be downloaded.`,
        );
      }
      return objects.presignGet(record.objectKey, {
        contentType: servedContentType(record.contentType),
        expiresInSeconds: DOWNLOAD_URL_SECONDS,
      });
    },

    /** Permanent: marked `deleting` (invisible at once), then every object version, then the record. */
    remove: async (clientId: string, externalId: string, attachmentId: string) => {
      await requireRequest(clientId, externalId);
      await retryOnConflict(
        async () => {
          const record = await store.get(clientId, externalId, attachmentId);
          // A deletion that failed half-way is finished by the next DELETE.
          if (!record || !(isVisible(record, now()) || record.status === 'deleting')) {
            throw new NotFound(`Attachment ${attachmentId}`);
          }
          const doomed =
            record.status === 'deleting'
              ? record
              : await transition(record, { status: 'deleting', expiresAt: undefined });
          await discard(doomed);
          log.info('Attachment deleted', { attachmentId });
        },
        { attempts: MAX_ATTEMPTS },
      );
    },

    sweep,
  };
};

export type AttachmentService = ReturnType<typeof attachmentService>;
