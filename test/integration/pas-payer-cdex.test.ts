import { randomUUID } from 'node:crypto';
import type {
  Bundle,
  ClaimResponse,
  DocumentReference,
  OperationOutcome,
  Parameters,
  ParametersParameter,
  Resource,
} from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAS_DOCUMENTS_MEMBER_ID } from '#local/pas-payer/seed';
import { type PasPayer, startPasPayer } from '#local/pas-payer/server';
import { accessTokenAt, jwksServer, pasRequestBundle, RENDERING_NPI } from './pas-payer-support.ts';

/*
 * The local PAS payer's CDex `$submit-attachment` over real HTTP with real tokens (docs/pas-payer.md):
 * the documents of a claim of the client, by TrackingId (the Claim's identifier), member and provider; the
 * shapes it refuses (400), the content and claims it will not take (422), and the pended claim's requests
 * for documentation that the documents answer.
 */
let payer: PasPayer;
let keys: Awaited<ReturnType<typeof jwksServer>>;
let client: string;
let otherClient: string;

beforeAll(async () => {
  keys = await jwksServer();
  payer = await startPasPayer();
  client = payer.registerClient({ jwksUri: keys.jwksUri, name: 'CDex client', answerShape: 'bundle' });
  otherClient = payer.registerClient({ jwksUri: keys.jwksUri, name: 'Another client', answerShape: 'bundle' });
});
afterAll(async () => {
  await payer?.close();
  await keys?.close();
});

const accessToken = (clientId: string) => accessTokenAt(payer, keys, clientId, 'system/Claim.write');

const post = async (operation: string, body: unknown, token: string, contentType = 'application/fhir+json') => {
  const response = await fetch(`${payer.fhirBaseUrl}/Claim/${operation}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as OperationOutcome | Bundle };
};

const CLAIM_SYSTEM = 'urn:trnorg:9012345678';
const PDF = Buffer.from('%PDF-1.7\nplan of care');

const document = (data = PDF.toString('base64')): DocumentReference => ({
  resourceType: 'DocumentReference',
  status: 'current',
  content: [{ attachment: { contentType: 'application/pdf', data } }],
});

const attachment = (
  code: string | null,
  lineItems: string[] = [],
  content: Resource = document(),
): ParametersParameter => ({
  name: 'Attachment',
  part: [
    ...lineItems.map((valueString) => ({ name: 'LineItem', valueString })),
    ...(code ? [{ name: 'Code', valueCodeableConcept: { coding: [{ system: 'http://loinc.org', code }] } }] : []),
    { name: 'Content', resource: content },
  ],
});

const parametersOf = (claimIdentifier: string, memberId: string, attachments: ParametersParameter[]): Parameters => ({
  resourceType: 'Parameters',
  parameter: [
    { name: 'TrackingId', valueIdentifier: { system: CLAIM_SYSTEM, value: claimIdentifier } },
    { name: 'AttachTo', valueCode: 'preauthorization' },
    { name: 'ProviderId', valueIdentifier: { system: 'http://hl7.org/fhir/sid/us-npi', value: RENDERING_NPI } },
    { name: 'MemberId', valueIdentifier: { value: memberId } },
    ...attachments,
  ],
});

const askedCodes = (answer: Bundle) => {
  const response = answer.entry![0]!.resource as ClaimResponse;
  const asked = new Set(response.communicationRequest?.map((reference) => reference.reference));
  return (answer.entry ?? [])
    .filter((entry) => asked.has(entry.fullUrl))
    .map((entry) => (entry.resource as { payload?: { contentString?: string }[] }).payload?.[0]?.contentString);
};

/** A pended claim that asks for documentation (the documents member): its Claim identifier and its Bundle. */
const pendedClaim = async (token: string) => {
  const claimIdentifier = `TRN-${randomUUID()}`;
  const request = pasRequestBundle({ memberId: PAS_DOCUMENTS_MEMBER_ID, claimIdentifier });
  const submitted = await post('$submit', request, token);
  expect(submitted.status).toBe(200);
  expect(askedCodes(submitted.body as Bundle)).toEqual(['18776-5', '11506-3']);
  return { claimIdentifier, request };
};

describe('local PAS payer: CDex $submit-attachment', () => {
  it('files the documents on the claim, once each, and stops asking for the codes that arrived', async () => {
    const token = await accessToken(client);
    const { claimIdentifier, request } = await pendedClaim(token);

    const sent = await post(
      '$submit-attachment',
      parametersOf(claimIdentifier, PAS_DOCUMENTS_MEMBER_ID, [attachment('18776-5', ['1'])]),
      token,
    );
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ severity: 'information' }] });
    expect(payer.documentsOfClaim(claimIdentifier)).toEqual([
      expect.objectContaining({ code: '18776-5', lineItems: [1], contentType: 'application/pdf', size: PDF.length }),
    ]);
    const again = await post(
      '$submit-attachment',
      parametersOf(claimIdentifier, PAS_DOCUMENTS_MEMBER_ID, [attachment('18776-5', ['1'])]),
      token,
    );
    expect(again.status).toBe(200);
    expect(payer.documentsOfClaim(claimIdentifier)).toHaveLength(1);

    // The same Bundle again: the claim as it is now.
    const after = await post('$submit', request, token);
    expect(askedCodes(after.body as Bundle)).toEqual(['11506-3']);
  });

  it('refuses what is not the operation’s shape with 400, and what it will not take with 422, keeping nothing', async () => {
    const token = await accessToken(client);
    const { claimIdentifier } = await pendedClaim(token);
    const valid = parametersOf(claimIdentifier, PAS_DOCUMENTS_MEMBER_ID, [attachment('18776-5')]);
    const without = (name: string): Parameters => ({
      ...valid,
      parameter: valid.parameter!.filter((parameter) => parameter.name !== name),
    });
    const withParameter = (parameter: ParametersParameter): Parameters => ({
      ...valid,
      parameter: [...valid.parameter!, parameter],
    });
    const replaced = (name: string, parameter: ParametersParameter): Parameters => ({
      ...valid,
      parameter: valid.parameter!.map((candidate) => (candidate.name === name ? parameter : candidate)),
    });
    const cases: [unknown, number, string][] = [
      [{ resourceType: 'Bundle', type: 'collection' }, 400, 'invalid'],
      [without('TrackingId'), 400, 'invalid'],
      [without('MemberId'), 400, 'invalid'],
      [without('ProviderId'), 400, 'invalid'],
      [without('Attachment'), 400, 'invalid'],
      [withParameter({ name: 'Diagnosis', valueString: 'x' }), 400, 'invalid'],
      [withParameter({ name: 'TrackingId', valueIdentifier: { value: 'second' } }), 400, 'invalid'],
      [replaced('AttachTo', { name: 'AttachTo', valueCode: 'encounter' }), 400, 'invalid'],
      [replaced('Attachment', attachment('18776-5', ['first'])), 400, 'invalid'],
      [
        replaced('Attachment', {
          name: 'Attachment',
          part: [
            { name: 'Content', resource: document() },
            { name: 'Content', resource: document() },
          ],
        }),
        400,
        'invalid',
      ],
      [replaced('AttachTo', { name: 'AttachTo', valueCode: 'claim' }), 422, 'not-supported'],
      [
        replaced(
          'Attachment',
          attachment('18776-5', [], {
            resourceType: 'DocumentReference',
            status: 'current',
            content: [{ attachment: { url: 'https://provider.example/doc.pdf' } }],
          }),
        ),
        422,
        'not-supported',
      ],
      [
        replaced(
          'Attachment',
          attachment('18776-5', [], { resourceType: 'Observation', status: 'final', code: { text: 'x' } }),
        ),
        422,
        'not-supported',
      ],
      [replaced('Attachment', attachment('18776-5', ['9'])), 422, 'business-rule'],
      [parametersOf(`${claimIdentifier}-other`, PAS_DOCUMENTS_MEMBER_ID, [attachment('18776-5')]), 422, 'not-found'],
      [parametersOf(claimIdentifier, 'SBX-10001', [attachment('18776-5')]), 422, 'not-found'],
    ];
    for (const [body, status, code] of cases) {
      const answer = await post('$submit-attachment', body, token);
      expect(
        [answer.status, (answer.body as OperationOutcome).issue?.[0]?.code],
        JSON.stringify(body).slice(0, 200),
      ).toEqual([status, code]);
    }
    // Another client's token: the claim is not its to add to.
    const other = await post('$submit-attachment', valid, await accessToken(otherClient));
    expect([other.status, (other.body as OperationOutcome).issue?.[0]?.code]).toEqual([422, 'not-found']);
    const text = await post('$submit-attachment', JSON.stringify(valid), token, 'text/plain');
    expect(text.status).toBe(415);
    const anonymous = await fetch(`${payer.fhirBaseUrl}/Claim/$submit-attachment`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    const get = await fetch(`${payer.fhirBaseUrl}/Claim/$submit-attachment`);
    expect(get.status).toBe(405);
    expect(payer.documentsOfClaim(claimIdentifier)).toEqual([]);
  });
});
