import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { s3 } from '#lib/aws/s3';
import { bucketName } from '#lib/config/resources';
import { s3VerifiesChecksums } from '#lib/config/settings';
import type { ObjectStorage } from './object-storage.ts';

const base64OfHex = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
const hexOfBase64 = (base64: string) => Buffer.from(base64, 'base64').toString('hex');
const expiry = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
const errorName = (error: unknown) => (error as { name?: string } | undefined)?.name;
const isMissing = (error: unknown) => errorName(error) === 'NoSuchKey' || errorName(error) === 'NotFound';

/** A store that has no object versions at all (e.g. an S3 emulator) answers ListObjectVersions like this. */
const versionsUnsupported = (error: unknown) => {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return ['MethodNotAllowed', 'NotImplemented'].includes(errorName(error) ?? '') || status === 405 || status === 501;
};

/** Every version and delete marker of exactly `key` (a prefix listing also matches longer keys). */
const versionsOf = async (key: string) => {
  const found: Array<{ Key: string; VersionId?: string }> = [];
  let keyMarker: string | undefined;
  let versionIdMarker: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectVersionsCommand({
        Bucket: bucketName(),
        Prefix: key,
        KeyMarker: keyMarker,
        VersionIdMarker: versionIdMarker,
      }),
    );
    for (const entry of [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]) {
      if (entry.Key === key) found.push({ Key: key, VersionId: entry.VersionId });
    }
    keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
    versionIdMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
  } while (keyMarker);
  return found;
};

/**
 * The attachments bucket (private, versioned, SSE-KMS by default encryption: no request names a key).
 * Presigned URLs carry only ids in their path and never a file name: URLs end up in logs.
 *
 * Checksums: every write names its SHA-256 (`put`, and the signed header of `presignPut`), and S3
 * refuses bytes that do not have it and keeps it with the object, so `describe` can vouch for an
 * object's SHA-256 with one HeadObject. Both writes are single PUTs (never multipart), whose checksum is
 * of the whole object. The capability is configuration (S3_VERIFIES_CHECKSUMS, lib/config/settings.ts): false
 * for the local emulator, which neither checks nor keeps checksums; `describe` then reports none.
 */
export const s3ObjectStorage: ObjectStorage = {
  get verifiesChecksums() {
    return s3VerifiesChecksums();
  },

  put: async (key, bytes, { contentType, sha256 }) => {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucketName(),
        Key: key,
        Body: bytes,
        ContentType: contentType,
        ContentLength: bytes.length,
        ChecksumSHA256: base64OfHex(sha256),
      }),
    );
  },

  presignPut: async (key, { contentType, size, sha256, expiresInSeconds }) => {
    // Signed headers: Content-Type, Content-Length and x-amz-checksum-sha256. S3 refuses a PUT without
    // them, and a body of another SHA-256 (BadDigest) before storing it. (A checksum left in the query
    // string, where the presigner would put it, is not checked by S3.)
    const checksum = base64OfHex(sha256);
    const url = await getSignedUrl(
      s3,
      new PutObjectCommand({
        Bucket: bucketName(),
        Key: key,
        ContentType: contentType,
        ContentLength: size,
        ChecksumSHA256: checksum,
      }),
      {
        expiresIn: expiresInSeconds,
        signableHeaders: new Set(['content-type', 'content-length']),
        unhoistableHeaders: new Set(['x-amz-checksum-sha256']),
      },
    );
    return {
      method: 'PUT',
      url,
      // Content-Length is signed too: the body must be exactly `size` bytes (HTTP clients set the header).
      headers: { 'Content-Type': contentType, 'x-amz-checksum-sha256': checksum },
      expiresAt: expiry(expiresInSeconds),
    };
  },

  presignGet: async (key, { contentType, expiresInSeconds }) => {
    const url = await getSignedUrl(
      s3,
      new GetObjectCommand({
        Bucket: bucketName(),
        Key: key,
        ResponseContentType: contentType,
        ResponseContentDisposition: 'attachment',
        ResponseCacheControl: 'no-store',
      }),
      { expiresIn: expiresInSeconds },
    );
    return { method: 'GET', url, headers: {}, expiresAt: expiry(expiresInSeconds) };
  },

  describe: async (key) => {
    try {
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucketName(), Key: key, ChecksumMode: 'ENABLED' }));
      // A composite checksum (multipart upload, "<base64>-<parts>") is not the whole object's SHA-256.
      const wholeObject = head.ChecksumType !== 'COMPOSITE' && !head.ChecksumSHA256?.includes('-');
      const sha256 =
        s3VerifiesChecksums() && wholeObject && head.ChecksumSHA256 ? hexOfBase64(head.ChecksumSHA256) : undefined;
      return { size: head.ContentLength ?? 0, sha256 };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  },

  readPrefix: async (key, bytes) => {
    try {
      const { Body } = await s3.send(
        new GetObjectCommand({ Bucket: bucketName(), Key: key, Range: `bytes=0-${bytes - 1}` }),
      );
      return Body ? await Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (isMissing(error)) return undefined;
      // An empty object has no byte 0: S3 answers 416 to any range.
      if (errorName(error) === 'InvalidRange') return new Uint8Array();
      throw error;
    }
  },

  read: async (key) => {
    try {
      const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucketName(), Key: key }));
      return Body as AsyncIterable<Uint8Array> | undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  },

  deleteAllVersions: async (key) => {
    let versions: Awaited<ReturnType<typeof versionsOf>>;
    try {
      versions = await versionsOf(key);
    } catch (error) {
      if (!versionsUnsupported(error)) throw error;
      // Without versioning, one delete is permanent.
      await s3.send(new DeleteObjectCommand({ Bucket: bucketName(), Key: key }));
      return;
    }
    for (let start = 0; start < versions.length; start += 1000) {
      const { Errors } = await s3.send(
        new DeleteObjectsCommand({
          Bucket: bucketName(),
          Delete: { Objects: versions.slice(start, start + 1000), Quiet: true },
        }),
      );
      if (Errors?.length) throw new Error(`S3 refused to delete ${Errors.length} version(s): ${Errors[0]?.Code}`);
    }
  },
};
