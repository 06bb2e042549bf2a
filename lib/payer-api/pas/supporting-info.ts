import { createHash } from 'node:crypto';
import type { Attachment, ClaimSupportingInfo, DocumentReference, Patient, Reference } from '@medplum/fhirtypes';
import { codedExtension, conceptOf, EXTENSIONS, SYSTEMS, X12 } from './codes.ts';
import type { MappingContext, PasAttachment } from './mapping-context.ts';
import { addProblem, serviceDatesOf } from './request-fields.ts';

/*
 * Claim.supportingInfo, in the IG's slices: the patient event's dates (PatientEvent), the provider's notes
 * (MessageText: X12 MSG, 264 characters, as our providerNotes), and each attachment as a DocumentReference
 * (AdditionalInformation, with its documentInformation: PWK01 report type, PWK02 transmission, PWK06 control
 * number). Sequences are unique within the Claim (spec-22).
 */

type Slice = Omit<ClaimSupportingInfo, 'sequence'>;

const categoryOf = (code: string) => conceptOf(SYSTEMS.pasTemp, code);

const patientEventOf = (mapping: MappingContext): Slice[] => {
  const dates = serviceDatesOf(mapping.document);
  if (dates === null) return [];
  const timing = 'day' in dates ? { timingDate: dates.day } : { timingPeriod: dates.period };
  return [{ id: '/fromDate', category: categoryOf('patientEvent'), ...timing }];
};

const notesOf = (mapping: MappingContext): Slice[] => {
  const notes = mapping.document.providerNotes;
  if (!Array.isArray(notes)) return [];
  return notes.flatMap((note, index): Slice[] => {
    if (typeof note === 'string' && note.trim() !== '') {
      return [{ id: `/providerNotes/${index}`, category: categoryOf('freeFormMessage'), valueString: note }];
    }
    addProblem(mapping, `/providerNotes/${index}`, 'unmappable', 'a provider note is not a text');
    return [];
  });
};

/**
 * The file's content as FHIR R4 carries it. Attachment.hash is a base64 SHA-1 of the data: computed when
 * the data is here, left out when not (the SHA-256 we hold is no SHA-1). The SHA-256 names this version of
 * the document instead, as an RFC 6920 `ni:` URI in masterIdentifier.
 */
const contentOf = (attachment: PasAttachment): Attachment => ({
  contentType: attachment.contentType,
  ...(attachment.data !== undefined
    ? {
        data: attachment.data,
        hash: createHash('sha1').update(Buffer.from(attachment.data, 'base64')).digest('base64'),
      }
    : {}),
  size: attachment.size,
  title: attachment.fileName,
  creation: attachment.createdAt,
});

/**
 * A document type that is a LOINC code says which document this is (what a payer's request for more
 * information names); else US Core's document type value set allows "unknown": the file is not classified.
 */
const documentTypeOf = (attachment: PasAttachment) =>
  attachment.documentType !== undefined && /^[0-9]{1,7}-[0-9]$/.test(attachment.documentType)
    ? conceptOf(SYSTEMS.loinc, attachment.documentType)
    : conceptOf(SYSTEMS.dataAbsentReason, 'unknown');

const documentOf = (attachment: PasAttachment, patient: Reference<Patient>): DocumentReference => ({
  resourceType: 'DocumentReference',
  ...(/^[0-9a-fA-F]{64}$/.test(attachment.sha256)
    ? {
        masterIdentifier: {
          system: SYSTEMS.uri,
          value: `ni:///sha-256;${Buffer.from(attachment.sha256, 'hex').toString('base64url')}`,
        },
      }
    : {}),
  status: 'current',
  type: documentTypeOf(attachment),
  category: [conceptOf(SYSTEMS.documentCategory, 'clinical-note')],
  subject: patient,
  date: attachment.createdAt,
  content: [{ attachment: contentOf(attachment) }],
});

const attachmentsOf = (
  mapping: MappingContext,
  attachments: readonly PasAttachment[],
  patient: Reference<Patient>,
): Slice[] =>
  attachments.map((attachment) => ({
    extension: [
      {
        url: EXTENSIONS.documentInformation,
        extension: [
          // OZ "Support Data for Claim": the generic report type; EL: sent electronically, in this Bundle.
          codedExtension('reportTypeCode', X12.reportType, 'OZ'),
          codedExtension('transmissionMethod', X12.transmission, 'EL'),
          { url: 'controlNumber', valueString: attachment.attachmentId },
        ],
      },
    ],
    category: categoryOf('additionalInformation'),
    valueReference: mapping.entries.add(`attachment:${attachment.attachmentId}`, documentOf(attachment, patient)),
  }));

export const mapSupportingInfo = (
  mapping: MappingContext,
  attachments: readonly PasAttachment[],
  patient: Reference<Patient>,
): ClaimSupportingInfo[] =>
  [...patientEventOf(mapping), ...notesOf(mapping), ...attachmentsOf(mapping, attachments, patient)].map(
    (slice, index) => ({ ...slice, sequence: index + 1 }),
  );
