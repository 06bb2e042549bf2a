import type { Bundle, Resource } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { readPasAnswer } from '#lib/payer-api/pas/answer-reader';
import {
  asParsed,
  claimResponse,
  decidedItem,
  ErrorResponseBundleExample,
  homecareAnswer,
  InsurerExample,
  InvalidRequestResponse,
  indexR4,
  PASClaimInquiryOperationResponseExample,
  PractitionerRequestorResponseExample,
  ReferralAuthorizationResponseBundleExample,
  ReferralPendingAuthorizationResponseBundleExample,
  RejectionResponseBundleExample,
  responseBundle,
  returned,
  UMOExample,
  validR4,
  X12_1365,
} from './pas-answer-examples.ts';

/** The reader of a valid R4 answer, as JSON.parse gives it. */
const read = (answer: Resource) => readPasAnswer(asParsed(validR4(answer)));

const searchset = (...resources: Resource[]): Bundle => ({
  resourceType: 'Bundle',
  type: 'searchset',
  total: resources.length,
  entry: resources.map((resource) => ({ resource, search: { mode: 'match' } })),
});

/** The decision of the IG's approved referral (ReferralAuthorizationResponseBundleExample). */
const approvedReferral = {
  kind: 'decision',
  decision: {
    status: 'approved',
    number: 'AUTH0001',
    decisionDate: '2005-05-02',
    claimResponseId: 'PractitionerRequestorResponseExample',
    claimIdentifier: '111099',
    items: [
      {
        sequence: 1,
        serviceCode: { system: X12_1365, code: '3' },
        status: 'approved',
        reviewActionCode: 'A1',
        number: 'AUTH0001',
        authorizedPeriod: { start: '2005-05-02', end: '2005-06-02' },
        authorizedQuantity: { value: 1, unit: null },
        reasons: [],
      },
    ],
    reasons: [],
    informationRequested: null,
  },
};

beforeAll(indexR4);

describe('readPasAnswer: the shapes payers answer in', () => {
  it('reads a PAS Response Bundle (the IG approved example) as its decision', () => {
    expect(read(ReferralAuthorizationResponseBundleExample)).toEqual(approvedReferral);
  });

  it('reads the same Bundle in Parameters, as `return` (the OperationDefinition) or under another single name', () => {
    expect(read(returned(ReferralAuthorizationResponseBundleExample))).toEqual(approvedReferral);
    expect(
      read({
        resourceType: 'Parameters',
        parameter: [{ name: 'response', resource: ReferralAuthorizationResponseBundleExample }],
      }),
    ).toEqual(approvedReferral);
  });

  it('prefers `return` over parameters of other names, whatever they hold', () => {
    const other = { name: 'outcome', resource: homecareAnswer(['A3', 'A3']) };
    expect(
      read({
        resourceType: 'Parameters',
        parameter: [other, { name: 'return', resource: ReferralAuthorizationResponseBundleExample }],
      }),
    ).toEqual(approvedReferral);
  });

  it('reads a bare ClaimResponse, without a Bundle to find the Claim in', () => {
    expect(read(PractitionerRequestorResponseExample)).toEqual(approvedReferral);
  });

  it('reads the IG inquiry answer (Parameters `responseBundle`), its Claim echoed in the Bundle', () => {
    const answer = read(PASClaimInquiryOperationResponseExample);
    expect(answer).toMatchObject({
      kind: 'decision',
      decision: {
        status: 'approved',
        number: 'AUTH0001',
        decisionDate: '2019-07-20',
        claimResponseId: 'PASClaimInquiryResponseExample',
        claimIdentifier: '111099',
      },
    });
    expect(answer.kind === 'decision' && answer.decision.items).toEqual([
      {
        sequence: 1,
        serviceCode: { system: X12_1365, code: '3' },
        status: 'approved',
        reviewActionCode: 'A1',
        number: 'AUTH0001',
        authorizedPeriod: null,
        authorizedQuantity: null,
        reasons: [],
      },
    ]);
  });

  it('reads the IG pended and rejected examples', () => {
    expect(read(ReferralPendingAuthorizationResponseBundleExample)).toMatchObject({
      kind: 'decision',
      decision: { status: 'pending', number: null, decisionDate: null, items: [{ status: 'pending' }] },
    });
    expect(read(RejectionResponseBundleExample)).toMatchObject({
      kind: 'decision',
      decision: { status: 'denied', number: null, decisionDate: '2005-05-02', items: [{ status: 'denied' }] },
    });
  });

  it('reads an OperationOutcome (the IG InvalidRequestResponse) as a refusal', () => {
    expect(read(InvalidRequestResponse)).toEqual({
      kind: 'refused',
      issues: [
        {
          severity: 'error',
          code: 'invalid',
          details: 'The input request is not of the desired format.',
          expression: [],
        },
      ],
    });
    expect(read(returned(InvalidRequestResponse))).toEqual(read(InvalidRequestResponse));
  });

  it('reads a ClaimResponse with outcome error (the IG ErrorResponseBundleExample) as a refusal with its errors', () => {
    expect(read(ErrorResponseBundleExample)).toEqual({
      kind: 'refused',
      issues: [
        { severity: 'error', code: '04', details: null, expression: [] },
        { severity: 'error', code: 'T4', details: null, expression: ['Bundle.entry[1].Organization.name'] },
      ],
    });
  });

  it('refuses on outcome error even when the ClaimResponse lists decided items', () => {
    const erred = claimResponse('Erred', {
      outcome: 'error',
      item: [decidedItem(1, 'A1')],
      error: [{ code: { coding: [{ system: 'https://codesystem.x12.org/005010/901', code: '15' }], text: 'x' } }],
    });
    expect(read(responseBundle(erred))).toEqual({
      kind: 'refused',
      issues: [{ severity: 'error', code: '15', details: 'x', expression: [] }],
    });
  });

  it('reads an inquiry that found nothing as not_found: no parameter, a Bundle without ClaimResponse, an empty searchset', () => {
    expect(read({ resourceType: 'Parameters' })).toEqual({ kind: 'not_found' });
    expect(read({ resourceType: 'Parameters', parameter: [{ name: 'return', valueBoolean: false }] })).toEqual({
      kind: 'not_found',
    });
    const withoutResponse: Bundle = {
      resourceType: 'Bundle',
      type: 'collection',
      entry: [UMOExample, InsurerExample].map((resource) => ({ fullUrl: `urn:uuid:${crypto.randomUUID()}`, resource })),
    };
    expect(read(returned(withoutResponse))).toEqual({ kind: 'not_found' });
    expect(read(searchset())).toEqual({ kind: 'not_found' });
    expect(read({ resourceType: 'Bundle', type: 'searchset', total: 0 })).toEqual({ kind: 'not_found' });
  });

  it('reads a searchset of response Bundles (an inquiry answered as a search)', () => {
    expect(read(searchset(ReferralAuthorizationResponseBundleExample))).toEqual(approvedReferral);
  });

  it('reads a searchset whose only entry is a failing OperationOutcome as a refusal, a warning as not_found', () => {
    expect(read(searchset(InvalidRequestResponse))).toMatchObject({ kind: 'refused', issues: [{ code: 'invalid' }] });
    const warning = {
      ...InvalidRequestResponse,
      issue: [{ severity: 'warning' as const, code: 'suppressed' as const }],
    };
    expect(read(searchset(warning))).toEqual({ kind: 'not_found' });
  });

  it('ignores an OperationOutcome beside the ClaimResponse (PAS: a warning that some were withheld)', () => {
    const withWarning = returned(ReferralAuthorizationResponseBundleExample);
    withWarning.parameter?.push({
      name: 'outcome',
      resource: { resourceType: 'OperationOutcome', issue: [{ severity: 'warning', code: 'suppressed' }] },
    });
    expect(read(withWarning)).toEqual(approvedReferral);
  });

  it('takes a ClaimResponse that is not first when it is the Bundle’s only one', () => {
    const bundle = ReferralAuthorizationResponseBundleExample;
    const reordered = { ...bundle, entry: [...(bundle.entry ?? [])].reverse() };
    expect(readPasAnswer(asParsed(reordered))).toEqual(approvedReferral);
  });

  it('is invalid when an answer holds several authorizations (which one is ours cannot be told)', () => {
    expect(read(returned(ReferralAuthorizationResponseBundleExample, RejectionResponseBundleExample))).toEqual({
      kind: 'invalid',
      reason: 'the payer answered with more than one authorization',
    });
    const twoResponses = responseBundle(PractitionerRequestorResponseExample);
    twoResponses.entry = [
      { fullUrl: 'urn:uuid:7f1f2c1e-0000-4000-8000-000000000001', resource: UMOExample },
      ...(twoResponses.entry ?? []),
      {
        fullUrl: 'urn:uuid:7f1f2c1e-0000-4000-8000-000000000002',
        resource: { ...PractitionerRequestorResponseExample, id: 'Other' },
      },
    ];
    expect(read(twoResponses)).toEqual({
      kind: 'invalid',
      reason: 'a Bundle of the answer holds several ClaimResponses and none first',
    });
  });

  it('takes the first entry when the Bundle holds further ClaimResponses after it', () => {
    const bundle = responseBundle(PractitionerRequestorResponseExample, [
      claimResponse('Previous', { item: [decidedItem(1, 'A3')] }),
    ]);
    expect(read(bundle)).toEqual(approvedReferral);
  });

  it('keeps one decision among Bundles that found nothing', () => {
    const empty: Bundle = { resourceType: 'Bundle', type: 'collection' };
    expect(read(returned(empty, ReferralAuthorizationResponseBundleExample, empty))).toEqual(approvedReferral);
  });

  it('is invalid, in its own words, for anything that is not a PAS answer', () => {
    const notFhir = { kind: 'invalid', reason: 'the answer is not a FHIR resource' };
    for (const body of [null, undefined, 'Bundle', 42, true, [], [ReferralAuthorizationResponseBundleExample], {}]) {
      expect(readPasAnswer(body)).toEqual(notFhir);
    }
    expect(readPasAnswer({ resourceType: 7 })).toEqual(notFhir);
    expect(readPasAnswer({ resourceType: 'Patient', id: 'x' })).toEqual({
      kind: 'invalid',
      reason: 'the answer is a resource PAS does not answer with',
    });
    for (const type of ['transaction-response', 'history', 'document', undefined, 3]) {
      expect(readPasAnswer({ ...asParsed(ReferralAuthorizationResponseBundleExample), type })).toEqual({
        kind: 'invalid',
        reason: 'a Bundle of the answer is neither a collection nor a searchset',
      });
    }
  });

  it('is invalid for resources nested deeper than PAS nests them', () => {
    const deep = returned(searchset(searchset(ReferralAuthorizationResponseBundleExample)));
    expect(readPasAnswer(asParsed(deep))).toEqual({
      kind: 'invalid',
      reason: 'the answer nests resources deeper than PAS does',
    });
    expect(readPasAnswer(asParsed(returned(returned(ReferralAuthorizationResponseBundleExample))))).toEqual({
      kind: 'invalid',
      reason: 'the answer nests Parameters in another resource',
    });
  });

  it('checks its fixtures with a validator that refuses invalid R4', () => {
    const wrong = asParsed(ReferralAuthorizationResponseBundleExample) as any;
    wrong.entry[0].resource.item[0].itemSequence = 'one';
    expect(() => validR4(wrong)).toThrow();
    expect(() => validR4({ ...PractitionerRequestorResponseExample, decision: 'approved' } as never)).toThrow();
  });
});
