import { createHash } from 'node:crypto';
import type { ObjectStorage, PresignedRequest } from '#lib/attachments/object-storage';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';

/**
 * The S3 adapter on the local emulator, with the one thing S3 does that s3rver does not: a PUT that
 * carries `x-amz-checksum-sha256` is refused unless its bytes have that SHA-256, and HeadObject (checksum
 * mode) reports it afterwards. `putPresigned` plays that part (the emulator stores the bytes, this
 * remembers the SHA-256 they were verified against; a mismatch is refused with 400 BadDigest as S3
 * does), and `describe` reports it. Every byte the code under test reads through it is counted.
 */
export const s3AsOnAws = () => {
  const checksums = new Map<string, string>();
  const reads = countingReads({
    ...s3ObjectStorage,
    verifiesChecksums: true,
    describe: async (key) => {
      const stored = await s3ObjectStorage.describe(key);
      return stored && { ...stored, sha256: checksums.get(key) };
    },
  });
  return {
    ...reads,
    putPresigned: async (upload: PresignedRequest, bytes: Uint8Array) => {
      const key = new URL(upload.url).pathname.split('/').slice(2).map(decodeURIComponent).join('/');
      const sent = Buffer.from(upload.headers['x-amz-checksum-sha256'] ?? '', 'base64').toString('hex');
      if (createHash('sha256').update(bytes).digest('hex') !== sent) return 400;
      const { status } = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
      if (status === 200) checksums.set(key, sent);
      return status;
    },
  };
};

/** `objects`, counting the bytes read through it (prefixes and whole streams alike). */
export const countingReads = (inner: ObjectStorage) => {
  let bytesRead = 0;
  const objects: ObjectStorage = {
    ...inner,
    readPrefix: async (key, bytes) => {
      const prefix = await inner.readPrefix(key, bytes);
      bytesRead += prefix?.length ?? 0;
      return prefix;
    },
    read: async (key) => {
      const stream = await inner.read(key);
      if (!stream) return undefined;
      return (async function* () {
        for await (const chunk of stream) {
          bytesRead += chunk.length;
          yield chunk;
        }
      })();
    },
  };
  return {
    objects,
    bytesRead: () => bytesRead,
    resetCount: () => {
      bytesRead = 0;
    },
  };
};
