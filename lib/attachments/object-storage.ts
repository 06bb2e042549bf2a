/** Port: the bytes of attachments, one object per attachment, addressed by keys from lib/object-keys.ts. */
export interface PresignedRequest {
  method: 'PUT' | 'GET';
  url: string;
  /** Headers the client must send exactly as given (they are part of the signature). */
  headers: Record<string, string>;
  expiresAt: string;
}

/** What the store says about an object without anyone reading its bytes. */
export interface StoredObject {
  size: number;
  /**
   * The whole object's SHA-256 (lower-case hex) as the store verified it when the object was written;
   * undefined when the store cannot vouch for one (it does not verify checksums, or the object was
   * written without a SHA-256, or in parts).
   */
  sha256: string | undefined;
}

export interface ObjectStorage {
  /**
   * The store refuses a write (put, presigned PUT) whose bytes do not have the SHA-256 it was given, and
   * reports that SHA-256 afterwards (`describe`): S3 does. A store that does not (the local S3 emulator)
   * says false, and its objects must be read in full to be verified.
   */
  readonly verifiesChecksums: boolean;
  /** Stores the bytes; the store verifies them against `sha256` (hex) where it can. */
  put(key: string, bytes: Uint8Array, options: { contentType: string; sha256: string }): Promise<void>;
  /** A URL that lets its holder PUT exactly this object: this type, this length, this SHA-256 where the store checks it. */
  presignPut(
    key: string,
    options: { contentType: string; size: number; sha256: string; expiresInSeconds: number },
  ): Promise<PresignedRequest>;
  /** A URL that lets its holder GET this object, served with this type as a download. */
  presignGet(key: string, options: { contentType: string; expiresInSeconds: number }): Promise<PresignedRequest>;
  /** Size and verified SHA-256 of the object (no bytes read), or undefined when there is no such object. */
  describe(key: string): Promise<StoredObject | undefined>;
  /** At most the first `bytes` bytes of the object, or undefined when there is no such object. */
  readPrefix(key: string, bytes: number): Promise<Uint8Array | undefined>;
  /** The object's bytes as a stream, or undefined when there is no such object. */
  read(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** Removes the object for good: every version and delete marker. Removing nothing is not an error. */
  deleteAllVersions(key: string): Promise<void>;
}
