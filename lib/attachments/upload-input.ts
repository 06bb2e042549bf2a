import { descriptiveText, MAX_DESCRIPTION_LENGTH, MAX_DOCUMENT_TYPE_LENGTH } from './content-policy.ts';

/** What a client says about a file, before any check of the file itself. */
export interface Descriptive {
  documentType?: string;
  description?: string;
}

export interface DirectUpload extends Descriptive {
  fileName: string | undefined;
  /** The file part's Content-Type, as sent. */
  mediaType: string | undefined;
  bytes: Uint8Array;
  /** Optional: when given, the received bytes must have this SHA-256. */
  sha256?: string;
}

export interface PresignedUploadRequest extends Descriptive {
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** The JSON declaration as the PresignedUpload schema (lib/validation/schemas/attachment.ts) admits it. */
interface PresignedUploadDeclaration {
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
  documentType?: string | null;
  description?: string | null;
}

/** The optional texts a client sends with a file (either flow), checked and trimmed. */
export const descriptiveOf = (source: { documentType?: unknown; description?: unknown }): Descriptive => {
  const documentType = descriptiveText('documentType', source.documentType, MAX_DOCUMENT_TYPE_LENGTH);
  const description = descriptiveText('description', source.description, MAX_DESCRIPTION_LENGTH);
  return { ...(documentType ? { documentType } : {}), ...(description ? { description } : {}) };
};

/**
 * application/json: the declaration of a file the client will PUT to a presigned URL. The endpoint has
 * already checked the body against the PresignedUpload schema (types, size bounds, SHA-256 digits,
 * text lengths, no unknown properties); what is left is the domain's: trimmed texts, a lower-case digest.
 */
export const presignedUploadOf = (body: unknown): PresignedUploadRequest => {
  const { fileName, contentType, size, sha256, ...texts } = body as PresignedUploadDeclaration;
  return { fileName, contentType, size, sha256: sha256.toLowerCase(), ...descriptiveOf(texts) };
};
