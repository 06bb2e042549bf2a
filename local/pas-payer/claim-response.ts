import type {
  Bundle,
  Claim,
  ClaimItem,
  ClaimResponse,
  ClaimResponseAddItem,
  ClaimResponseItem,
  Extension,
  Identifier,
  Period,
} from '@medplum/fhirtypes';
import type { StoredClaim } from './claims.ts';
import { type ItemDecision, REVIEW_ACTION_TEXT } from './decisions.ts';
import { REVIEW_REASON_SYSTEM } from './seed.ts';

/**
 * The payer's answers as PAS shapes them (ClaimResponse.fsh, Examples.fsh): a PAS Response Bundle whose
 * first entry is the ClaimResponse, then the request's resources it references. Each item's adjudication
 * carries the reviewAction extension: the X12 306 code, the item's review number when certified, the
 * reason when not. `outcome` says whether processing finished, not what was decided: PAS binds it to
 * complete | error | partial (no `queued`), and its pended example is `complete` with A4 items.
 */
const PAS = 'http://hl7.org/fhir/us/davinci-pas/StructureDefinition/';
const X12 = 'https://codesystem.x12.org/005010/';
/** Not echoed in answers: attachments are large, and the payer has them. */
const NOT_ECHOED = new Set(['DocumentReference', 'Binary']);

const coded = (system: string, code: string, display?: string) => ({
  coding: [{ system, code, ...(display ? { display } : {}) }],
});

/** The period the item asked for, which is what a certification covers here. */
const periodOf = (item: ClaimItem | undefined): Period | undefined =>
  item?.servicedPeriod ?? (item?.servicedDate ? { start: item.servicedDate, end: item.servicedDate } : undefined);

function reviewAction(stored: StoredClaim, decision: ItemDecision): Extension {
  const certified = decision.action === 'A1' || decision.action === 'A2';
  return {
    url: `${PAS}extension-reviewAction`,
    extension: [
      {
        url: `${PAS}extension-reviewActionCode`,
        valueCodeableConcept: coded(`${X12}306`, decision.action, REVIEW_ACTION_TEXT[decision.action]),
      },
      ...(certified ? [{ url: 'number', valueString: `${stored.preAuthRef}-${decision.sequence}` }] : []),
      ...(decision.reason
        ? [
            {
              url: 'reasonCode',
              valueCodeableConcept: coded(REVIEW_REASON_SYSTEM, decision.reason.code, decision.reason.display),
            },
          ]
        : []),
    ],
  };
}

/**
 * The item's extensions: issue date and period of a certification, and its detail (on an item, what was
 * asked: a part certified is in addItem); the pend's number; the provider PAS requires.
 */
function itemExtensions(stored: StoredClaim, decision: ItemDecision, item: ClaimItem | undefined): Extension[] {
  const certified = decision.action === 'A1' || decision.action === 'A2';
  const period = periodOf(item);
  const quantity = item?.quantity;
  return [
    ...(certified ? [{ url: `${PAS}extension-itemPreAuthIssueDate`, valueDate: stored.decidedAt.slice(0, 10) }] : []),
    ...(certified && period ? [{ url: `${PAS}extension-itemPreAuthPeriod`, valuePeriod: period }] : []),
    ...(certified && quantity
      ? [{ url: `${PAS}extension-itemAuthorizedDetail`, extension: [{ url: 'quantity', valueQuantity: quantity }] }]
      : []),
    ...(decision.action === 'A4' && stored.pendRef
      ? [{ url: `${PAS}extension-administrationReferenceNumber`, valueString: stored.pendRef }]
      : []),
    {
      url: `${PAS}extension-itemAuthorizedProvider`,
      extension: [
        ...(stored.claim.provider ? [{ url: 'provider', valueReference: stored.claim.provider }] : []),
        { url: `${PAS}extension-authorizedProviderType`, valueCodeableConcept: coded(`${X12}98`, '1P', 'Provider') },
      ],
    },
  ];
}

function itemOf(stored: StoredClaim, decision: ItemDecision): ClaimResponseItem {
  const item = stored.claim.item?.find((candidate) => candidate.sequence === decision.sequence);
  return {
    itemSequence: decision.sequence,
    extension: itemExtensions(stored, decision, item),
    adjudication: [
      {
        category: coded('http://terminology.hl7.org/CodeSystem/adjudication', 'submitted'),
        extension: [reviewAction(stored, decision)],
      },
    ],
  };
}

/**
 * What was certified of an item certified in part (A2): PAS returns an authorization that differs from the
 * request as an addItem naming the item's sequence, here with the quantity certified.
 */
function addItemOf(stored: StoredClaim, decision: ItemDecision): ClaimResponseAddItem[] {
  const item = stored.claim.item?.find((candidate) => candidate.sequence === decision.sequence);
  if (decision.action !== 'A2' || !item) return [];
  const period = periodOf(item);
  return [
    {
      itemSequence: [decision.sequence],
      productOrService: item.productOrService,
      ...(period ? { servicedPeriod: period } : {}),
      quantity: { ...item.quantity, value: decision.certifiedQuantity },
      adjudication: [
        {
          category: coded('http://terminology.hl7.org/CodeSystem/adjudication', 'submitted'),
          extension: [reviewAction(stored, decision)],
        },
      ],
    },
  ];
}

/**
 * The payer's words on a claim denied in whole: PAS carries X12's free-form message (MSG) as a process note,
 * here without a number, so it is about the whole claim, beside each item's coded reason. No patient data.
 */
export const DENIAL_NOTE =
  'The clinical information submitted does not establish medical necessity for the requested services. A peer-to-peer review may be requested.';

/** The claim's current ClaimResponse. */
export const claimResponseOf = (stored: StoredClaim): ClaimResponse => ({
  resourceType: 'ClaimResponse',
  id: stored.id,
  ...(stored.claim.identifier ? { identifier: stored.claim.identifier } : {}),
  status: 'active',
  type: stored.claim.type,
  use: 'preauthorization',
  patient: stored.claim.patient,
  created: stored.decidedAt,
  // The checks (pas-constraints.ts) let no Claim through without an insurer in the Bundle.
  insurer: stored.claim.insurer!,
  ...(stored.claim.provider ? { requestor: stored.claim.provider } : {}),
  request: { reference: stored.claimFullUrl },
  outcome: 'complete',
  ...(stored.preAuthRef ? { preAuthRef: stored.preAuthRef } : {}),
  item: stored.items.map((decision) => itemOf(stored, decision)),
  ...(stored.items.some((decision) => decision.action === 'A2')
    ? { addItem: stored.items.flatMap((decision) => addItemOf(stored, decision)) }
    : {}),
  ...(stored.verdict === 'denied' ? { processNote: [{ type: 'display', text: DENIAL_NOTE }] } : {}),
});

/** An error outcome for a claim the payer cannot take (X12 AAA reject reason), with the element's path. */
export const errorResponseOf = (
  request: Bundle,
  claim: Claim,
  reject: { code: string; display: string; path: string },
  id: string,
  created: string,
): ClaimResponse => ({
  resourceType: 'ClaimResponse',
  id,
  ...(claim.identifier ? { identifier: claim.identifier } : {}),
  status: 'active',
  type: claim.type,
  use: 'preauthorization',
  patient: claim.patient,
  created,
  insurer: claim.insurer!,
  ...(claim.provider ? { requestor: claim.provider } : {}),
  request: { reference: request.entry![0]!.fullUrl! },
  outcome: 'error',
  error: [
    {
      extension: [{ url: `${PAS}extension-errorPath`, valueString: reject.path }],
      code: coded(`${X12}901`, reject.code, reject.display),
    },
  ],
});

/** A PAS Response Bundle: the ClaimResponse first, then the request's resources but its attachments. */
export const responseBundleOf = (
  claimResponse: ClaimResponse,
  request: Bundle,
  identifier: Identifier | undefined,
  timestamp: string,
): Bundle => ({
  resourceType: 'Bundle',
  ...(identifier ? { identifier } : {}),
  type: 'collection',
  timestamp,
  entry: [
    { fullUrl: `urn:uuid:${claimResponse.id}`, resource: claimResponse },
    ...(request.entry ?? []).filter((entry) => !NOT_ECHOED.has(entry.resource?.resourceType ?? '')),
  ],
});
