import { createHash } from 'node:crypto';
import type { Claim, DocumentReference } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import type { PasAttachment } from '#lib/payer-api/pas/mapping-context';
import { buildPasRequestBundle } from '#lib/payer-api/pas/request-bundle';
import { validationErrors } from './fhir-validation.ts';
import { ATTACHMENT, demoDocument, resolve, submission } from './pas-fixtures.ts';

const PAS_TEMP = 'http://hl7.org/fhir/us/davinci-pas/CodeSystem/PASTempCodes';

const build = (
  attachments: readonly PasAttachment[],
  change: (document: Record<string, unknown>) => void = () => {},
) => {
  const document = demoDocument();
  change(document);
  const { bundle, problems } = buildPasRequestBundle(submission(document, { attachments }));
  return { bundle, problems, claim: bundle.entry![0]!.resource as Claim };
};

const SECOND: PasAttachment = {
  attachmentId: '01950000-0000-7000-8000-000000000002',
  fileName: 'notes.txt',
  contentType: 'text/plain',
  size: 5,
  sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
  createdAt: '2026-03-01T09:30:00.000Z',
};

describe('the supporting information', () => {
  it('is the patient event, the provider notes, then each attachment, with unique sequences', () => {
    const { claim, bundle } = build([ATTACHMENT, SECOND]);
    expect(validationErrors(bundle)).toEqual([]);
    const info = claim.supportingInfo ?? [];
    expect(info.map((entry) => [entry.sequence, entry.category.coding?.[0]?.code])).toEqual([
      [1, 'patientEvent'],
      [2, 'freeFormMessage'],
      [3, 'additionalInformation'],
      [4, 'additionalInformation'],
    ]);
    expect(info.every((entry) => entry.category.coding?.[0]?.system === PAS_TEMP)).toBe(true);
    expect(info[0]).toMatchObject({ id: '/fromDate', timingPeriod: { start: '2026-04-01', end: '2026-04-30' } });
    expect(info[1]).toMatchObject({
      id: '/providerNotes/0',
      valueString: 'Conservative therapy for 8 weeks without relief.',
    });
  });

  it('carries an attachment as a DocumentReference with its document information (PWK01 OZ, PWK02 EL, PWK06 its id)', () => {
    const { claim, bundle } = build([ATTACHMENT]);
    const slice = claim.supportingInfo?.[2];
    expect(slice?.extension).toEqual([
      {
        url: 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/extension-documentInformation',
        extension: [
          {
            url: 'reportTypeCode',
            valueCodeableConcept: { coding: [{ system: 'https://codesystem.x12.org/005010/755', code: 'OZ' }] },
          },
          {
            url: 'transmissionMethod',
            valueCodeableConcept: { coding: [{ system: 'https://codesystem.x12.org/005010/756', code: 'EL' }] },
          },
          { url: 'controlNumber', valueString: ATTACHMENT.attachmentId },
        ],
      },
    ]);
    const document = resolve<DocumentReference>(bundle, slice?.valueReference);
    expect(document).toEqual({
      resourceType: 'DocumentReference',
      masterIdentifier: {
        system: 'urn:ietf:rfc:3986',
        value: `ni:///sha-256;${Buffer.from(ATTACHMENT.sha256, 'hex').toString('base64url')}`,
      },
      status: 'current',
      type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/data-absent-reason', code: 'unknown' }] },
      category: [
        {
          coding: [
            {
              system: 'http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category',
              code: 'clinical-note',
            },
          ],
        },
      ],
      subject: claim.patient,
      date: '2026-03-01T09:00:00.000Z',
      content: [
        {
          attachment: {
            contentType: 'application/pdf',
            data: ATTACHMENT.data,
            // FHIR R4's hash: base64 of the SHA-1 of the data.
            hash: createHash('sha1').update('hello world').digest('base64'),
            size: 11,
            title: 'mri-report.pdf',
            creation: '2026-03-01T09:00:00.000Z',
          },
        },
      ],
    });
    expect(document.content[0]?.attachment.hash).toBe('Kq5sNclPz7QV2+lfQIuc6R7oRu0=');
  });

  it('leaves out data and hash when the file is not given (the SHA-256 still names it)', () => {
    const { claim, bundle } = build([SECOND]);
    const document = resolve<DocumentReference>(bundle, claim.supportingInfo?.[2]?.valueReference);
    expect(document.content[0]?.attachment).toEqual({
      contentType: 'text/plain',
      size: 5,
      title: 'notes.txt',
      creation: '2026-03-01T09:30:00.000Z',
    });
    expect(document.masterIdentifier?.value).toMatch(/^ni:\/\/\/sha-256;[A-Za-z0-9_-]{43}$/);
  });

  it('gives one day a timingDate, and refuses a provider note that is no text', () => {
    const { claim, problems } = build([], (document) => {
      document.toDate = document.fromDate;
      document.providerNotes = ['first', 7, 'third'];
    });
    expect(claim.supportingInfo?.map((entry) => entry.id)).toEqual([
      '/fromDate',
      '/providerNotes/0',
      '/providerNotes/2',
    ]);
    expect(claim.supportingInfo?.[0]).toMatchObject({ timingDate: '2026-04-01' });
    expect(problems).toEqual([
      { path: '/providerNotes/1', reason: 'unmappable', message: 'a provider note is not a text' },
    ]);
  });

  it('is absent when the request has no dates, notes or attachments', () => {
    const { claim } = build([], (document) => {
      delete document.fromDate;
      delete document.toDate;
      delete document.providerNotes;
    });
    expect(claim.supportingInfo).toBeUndefined();
  });
});
