import { createHash } from 'node:crypto';
import type { DocumentReference, Identifier } from '@medplum/fhirtypes';
import { conceptOf, SYSTEMS } from '#lib/payer-api/pas/codes';
import type { PasAttachment } from '#lib/payer-api/pas/mapping-context';

/*
 * An attachment as CDex's `Attachment.Content` carries it: a DocumentReference (the type every
 * `$submit-attachment` server SHALL take) with the file inline, base64 (servers take `data` or `url`;
 * a URL of ours would need the payer to reach our storage, so the bytes go with it). The member is named
 * by identifier: no Patient resource travels with the Parameters.
 */

export const LOINC = 'http://loinc.org';

/** A LOINC code's form: up to 7 digits, a dash, its check digit. */
const LOINC_CODE = /^[0-9]{1,7}-[0-9]$/;

/** The LOINC attachment code an attachment's documentType names, when it names one; else null. */
export const loincCodeOf = (documentType: string | null | undefined): string | null => {
  const code = documentType?.trim() ?? '';
  return LOINC_CODE.test(code) ? code : null;
};

/** An attachment with the LOINC code of what it answers (null: not said; the payer files it by claim). */
export interface CdexAttachment extends PasAttachment {
  code: string | null;
}

/** The RFC 6920 name of the file's SHA-256: this version of the document, whatever the payer renames it. */
const masterIdentifierOf = (sha256: string): Pick<DocumentReference, 'masterIdentifier'> =>
  /^[0-9a-fA-F]{64}$/.test(sha256)
    ? {
        masterIdentifier: {
          system: SYSTEMS.uri,
          value: `ni:///sha-256;${Buffer.from(sha256, 'hex').toString('base64url')}`,
        },
      }
    : {};

/** The DocumentReference of an attachment whose bytes are here (`data`, base64). */
export const documentOf = (attachment: CdexAttachment & { data: string }, member: Identifier): DocumentReference => ({
  resourceType: 'DocumentReference',
  ...masterIdentifierOf(attachment.sha256),
  status: 'current',
  // What the payer asked for, when the client said which document answers it; else US Core's "unknown".
  type: attachment.code !== null ? conceptOf(LOINC, attachment.code) : conceptOf(SYSTEMS.dataAbsentReason, 'unknown'),
  category: [conceptOf(SYSTEMS.documentCategory, 'clinical-note')],
  subject: { identifier: member },
  date: attachment.createdAt,
  content: [
    {
      attachment: {
        contentType: attachment.contentType,
        data: attachment.data,
        // FHIR R4's Attachment.hash is a base64 SHA-1 of the data.
        hash: createHash('sha1').update(Buffer.from(attachment.data, 'base64')).digest('base64'),
        size: attachment.size,
        title: attachment.fileName,
        creation: attachment.createdAt,
      },
    },
  ],
});
