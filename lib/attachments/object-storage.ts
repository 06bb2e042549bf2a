/** Port: the bytes of attachments, one object per attachment, addressed by keys from lib/keys.ts. */
export interface PresignedRequest {
  method: 'PUT' | 'GET';
  url: string;
  /** Headers the client must send exactly as given (they are part of the signature). */
  headers: Record<string, string>;
  expiresAt: string;
}

export interface ObjectStorage {
  /** Stores the bytes; the store verifies them against `sha256` (hex) where it can. */
  put(key: string, bytes: Uint8Array, options: { contentType: string; sha256: string }): Promise<void>;
  /** A URL that lets its holder PUT exactly this object: this type, this length, this SHA-256 where the store checks it. */
  presignPut(
    key: string,
    options: { contentType: string; size: number; sha256: string; expiresInSeconds: number },
  ): Promise<PresignedRequest>;
  /** A URL that lets its holder GET this object, served with this type as a download. */
  presignGet(key: string, options: { contentType: string; expiresInSeconds: number }): Promise<PresignedRequest>;
  /** The object's bytes as a stream, or undefined when there is no such object. */
  read(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** Removes the object for good: every version and delete marker. Removing nothing is not an error. */
  deleteAllVersions(key: string): Promise<void>;
}
