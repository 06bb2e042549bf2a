import { createHash } from 'node:crypto';

/*
 * What a multipart/form-data body is once parsed (multipart-parse.ts parses it; multipart.ts is the
 * endpoint's parser option). Apart from the parser so that a handler and the idempotency fingerprint can
 * name a form without loading Middy's parser and busboy.
 */
/** Bounds of a multipart/form-data body; every one exceeded is a 4xx, never a partial parse. */
export interface MultipartLimits {
  /** The whole body, decoded (after API Gateway's base64). */
  maxBytes: number;
  /** One file part. */
  maxFileBytes: number;
  maxFiles?: number;
  maxFields?: number;
  /** One non-file field's value, in bytes. */
  maxFieldBytes?: number;
}

export interface FormFile {
  field: string;
  /** As sent (path and all: sanitizing is the caller's business); undefined without a filename parameter. */
  fileName: string | undefined;
  /** The part's own Content-Type (type/subtype, as busboy reads it); undefined when the part has none. */
  mediaType: string | undefined;
  bytes: Buffer;
}

/** A parsed multipart/form-data body. A class, so a handler can tell it from any parsed JSON. */
export class MultipartForm {
  constructor(
    readonly files: readonly FormFile[],
    /** Every value of every non-file field, in order. */
    readonly fields: ReadonlyMap<string, readonly string[]>,
  ) {}

  /**
   * What the form says, as plain JSON: every field's values and each file's name, type, size and
   * SHA-256, not its bytes. Two sendings of the same form give the same JSON whatever their
   * boundaries, which is what idempotent retries compare (lib/http/idempotency.ts).
   */
  toJSON() {
    return {
      fields: Object.fromEntries(this.fields),
      files: this.files.map(({ field, fileName, mediaType, bytes }) => ({
        field,
        fileName: fileName ?? null,
        mediaType: mediaType ?? null,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      })),
    };
  }
}
