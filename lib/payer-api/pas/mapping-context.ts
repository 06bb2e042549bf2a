import type { StoredRequest } from '#lib/entities/request';
import type { BundleEntries } from './bundle-entries.ts';

/** The payer a submission or an inquiry goes to, from the payer directory. */
export interface PasPayer {
  payerId: string;
  name: string | null;
}

/** An attachment of the request, carried in the Bundle as a DocumentReference. */
export interface PasAttachment {
  attachmentId: string;
  fileName: string;
  contentType: string;
  /** Bytes. */
  size: number;
  /** Lower-case hex SHA-256 of the bytes. */
  sha256: string;
  /** ISO 8601 instant. */
  createdAt: string;
  /** The file, base64; PAS wants the content inline (PASDocumentReference: data 1..1, url 0..0). */
  data?: string;
  /** The client's document type: a LOINC code (`18776-5`) names the document asked for (PWK01's LOINC). */
  documentType?: string | undefined;
}

export interface PasSubmission {
  request: StoredRequest;
  /** Stable for one submission: a retried $submit carries the same one, and so the same Bundle. */
  bundleIdentifier: string;
  /** ISO 8601 instant: Bundle.timestamp and Claim.created. */
  submittedAt: string;
  payer: PasPayer;
  attachments: readonly PasAttachment[];
  /** An update's: its first claim's identifier, which its resources' fullUrls are named on (bundle-entries.ts). */
  entryNamespace?: string | undefined;
}

export interface PasInquiry {
  request: StoredRequest;
  /** This inquiry's own transaction identifier (Bundle.identifier): new for each inquiry. */
  bundleIdentifier: string;
  /** ISO 8601 instant: Bundle.timestamp and Claim.created. */
  inquiredAt: string;
  payer: PasPayer;
  /** The identifier of the submitted Claim (its submission's Bundle identifier), when it went through PAS. */
  claimIdentifier: string | null;
  /** The payer's authorization number for the request, when one is known. */
  authorizationNumber: string | null;
}

/** One field PAS cannot do without, missing from the request or not mappable to what PAS binds. */
export interface MappingProblem {
  /** Where in the request, as a JSON Pointer: `/patient/memberId`, `/procedures/2/code`. */
  path: string;
  reason: 'missing' | 'unmappable';
  /** Our words, naming the field and the rule; never a value of the request (they are PHI). */
  message: string;
}

/** What each mapper works on: the request, the problems found so far, the Bundle's entries, the payer. */
export interface MappingContext {
  document: Record<string, unknown>;
  problems: MappingProblem[];
  entries: BundleEntries;
  payer: PasPayer;
}
