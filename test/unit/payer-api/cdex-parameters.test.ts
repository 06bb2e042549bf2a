import { createHash } from 'node:crypto';
import type { DocumentReference, Parameters, ParametersParameter } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import type { StoredRequest } from '#lib/entities/request';
import { type CdexAttachment, loincCodeOf } from '#lib/payer-api/cdex/attachment-content';
import {
  buildSubmitAttachmentParameters,
  SUBMIT_ATTACHMENT_PROFILE,
} from '#lib/payer-api/cdex/submit-attachment-parameters';
import { validationErrors } from './fhir-validation.ts';
import { ATTACHMENT, demoDocument, PAYER, REQUESTER_NPI, storedRequest } from './pas-fixtures.ts';

const CLAIM_IDENTIFIER = '01950000-0000-7000-8000-00000000abcd';
const LOINC = 'http://loinc.org';

/** A pended request whose payer asked for a plan of care for item 1 and progress notes for the whole request. */
const pended = (document: Record<string, unknown> = demoDocument()): StoredRequest => ({
  ...storedRequest(document),
  authorization: {
    status: 'pending',
    number: null,
    decisionDate: null,
    lastCheckedAt: '2026-03-02T10:00:01.000Z',
    informationRequested: {
      requestedAt: '2026-03-02T10:00:01.000Z',
      dueBy: '2026-03-16',
      items: [
        { code: { system: LOINC, code: '18776-5' }, text: 'Plan of care', sequence: 1 },
        { code: { system: LOINC, code: '18776-5' }, text: 'Plan of care', sequence: 2 },
        { code: { system: LOINC, code: '11506-3' }, text: 'Progress notes', sequence: null },
      ],
    },
  },
});

const PLAN: CdexAttachment = { ...ATTACHMENT, code: '18776-5' };
const NOTES: CdexAttachment = {
  ...ATTACHMENT,
  attachmentId: '01950000-0000-7000-8000-000000000002',
  fileName: 'notes.txt',
  contentType: 'text/plain',
  code: '11506-3',
};
const UNCODED: CdexAttachment = { ...ATTACHMENT, attachmentId: '01950000-0000-7000-8000-000000000003', code: null };

const build = (request: StoredRequest, attachments: readonly CdexAttachment[]) =>
  buildSubmitAttachmentParameters({ request, payer: PAYER, claimIdentifier: CLAIM_IDENTIFIER, attachments });

const named = (parameters: Parameters | ParametersParameter, name: string): ParametersParameter[] => {
  const list = 'resourceType' in parameters ? parameters.parameter : (parameters as ParametersParameter).part;
  return (list ?? []).filter((p) => p.name === name);
};

describe('the CDex $submit-attachment Parameters', () => {
  it('ties the documents to the claim we sent, as a prior authorization of the member, from the requester', () => {
    const { parameters, problems } = build(pended(), [PLAN]);
    expect(problems).toEqual([]);
    expect(validationErrors(parameters)).toEqual([]);
    expect(parameters.meta?.profile).toEqual([SUBMIT_ATTACHMENT_PROFILE]);
    expect(parameters.parameter?.map((p) => p.name)).toEqual([
      'TrackingId',
      'AttachTo',
      'PayerId',
      'ProviderId',
      'MemberId',
      'ServiceDate',
      'Attachment',
    ]);
    const [tracking, attachTo, payer, provider, member, serviceDate] = parameters.parameter!;
    expect(tracking!.valueIdentifier).toEqual({ system: 'urn:service-review-api:pas:claim', value: CLAIM_IDENTIFIER });
    expect(attachTo!.valueCode).toBe('preauthorization');
    expect(payer!.valueIdentifier).toEqual({ system: 'urn:service-review-api:pas:payer-id', value: PAYER.payerId });
    expect(provider!.valueIdentifier).toEqual({ system: 'http://hl7.org/fhir/sid/us-npi', value: REQUESTER_NPI });
    expect(member!.valueIdentifier).toEqual({
      system: `urn:service-review-api:pas:payer:${PAYER.payerId}:member-id`,
      value: 'MBR-0001',
    });
    expect(serviceDate!.valueDateTime).toBe('2026-04-01');
  });

  it('sends each document with the items the payer asked its code for, its LOINC code and its bytes inline', () => {
    const { parameters } = build(pended(), [PLAN, NOTES, UNCODED]);
    const [plan, notes, uncoded] = named(parameters, 'Attachment');
    // Asked for items 1 and 2: both; asked for the whole request: no LineItem; no code: neither.
    expect(named(plan!, 'LineItem').map((p) => p.valueString)).toEqual(['1', '2']);
    expect(named(notes!, 'LineItem')).toEqual([]);
    expect(uncoded!.part!.map((p) => p.name)).toEqual(['Content']);
    expect(named(plan!, 'Code')[0]!.valueCodeableConcept).toEqual({ coding: [{ system: LOINC, code: '18776-5' }] });
    const document = named(plan!, 'Content')[0]!.resource as DocumentReference;
    expect(document).toMatchObject({
      resourceType: 'DocumentReference',
      status: 'current',
      type: { coding: [{ system: LOINC, code: '18776-5' }] },
      subject: { identifier: { value: 'MBR-0001' } },
      masterIdentifier: { system: 'urn:ietf:rfc:3986' },
    });
    const content = document.content[0]!.attachment;
    expect(Buffer.from(content.data!, 'base64').toString()).toBe('hello world');
    expect(content.hash).toBe(createHash('sha1').update('hello world').digest('base64'));
    expect(content).toMatchObject({ contentType: 'application/pdf', size: 11, title: 'mri-report.pdf' });
    const unknownType = (named(uncoded!, 'Content')[0]!.resource as DocumentReference).type;
    expect(unknownType?.coding?.[0]?.code).toBe('unknown');
    expect(validationErrors(parameters)).toEqual([]);
  });

  it("names an organization requester's NPI as OrganizationId", () => {
    const document = demoDocument();
    document.requestingProvider = { roleCode: '1P', npi: REQUESTER_NPI, organizationName: 'Doe Family Practice' };
    const { parameters } = build(pended(document), [PLAN]);
    expect(named(parameters, 'ProviderId')).toEqual([]);
    expect(named(parameters, 'OrganizationId')[0]!.valueIdentifier!.value).toBe(REQUESTER_NPI);
  });

  it('lists what keeps it from being sent, by request path: no NPI, no member id, no file, nothing to send', () => {
    const document = demoDocument();
    document.requestingProvider = { roleCode: '1P', lastName: 'Doe' };
    (document.patient as Record<string, unknown>).memberId = ' ';
    const { data: _, ...unread } = PLAN;
    expect(build(pended(document), [unread]).problems.map((problem) => [problem.path, problem.reason])).toEqual([
      ['/patient/memberId', 'missing'],
      ['/requestingProvider/npi', 'missing'],
      [`/attachments/${PLAN.attachmentId}`, 'missing'],
    ]);
    expect(build(pended(), []).problems.map((problem) => problem.path)).toEqual(['/attachmentIds']);
  });

  it("reads a LOINC code from an attachment's documentType, and nothing else", () => {
    expect(loincCodeOf('18776-5')).toBe('18776-5');
    expect(loincCodeOf(' 11506-3 ')).toBe('11506-3');
    for (const other of ['Radiology report', '18776', '18776-55', '', null, undefined]) {
      expect(loincCodeOf(other)).toBeNull();
    }
  });
});
