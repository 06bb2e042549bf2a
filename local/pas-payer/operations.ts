import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bundle, Claim } from '@medplum/fhirtypes';
import { claimOf, coverageOf, identifierKey, memberIdOf } from './bundle-reading.ts';
import { claimResponseOf, errorResponseOf, responseBundleOf } from './claim-response.ts';
import type { ClaimStore, StoredClaim } from './claims.ts';
import type { RegisteredClient } from './clients.ts';
import type { ClaimVerdict } from './decisions.ts';
import { withDocumentationRequests } from './documentation-requests.ts';
import { checkedBundle, clientOfBearer, shaped } from './fhir-requests.ts';
import { outcomeOf, Refusal, sendFhir } from './http.ts';
import { matchingClaims } from './inquiry.ts';
import { type MemberRule, PAS_MEMBER_RULES } from './seed.ts';
import type { TokenStore } from './tokens.ts';

/**
 * POST /fhir/Claim/$submit and /fhir/Claim/$inquire: checked Bundles, decided by the member's rule
 * (seed.ts). A member whose rule hangs gets no answer; a fault member's first call of a kind for a claim
 * gets 429 (Retry-After) or 503, the next one its answer.
 */
export interface PayerState {
  clients: { get(clientId: string): RegisteredClient | undefined };
  tokens: TokenStore;
  claims: ClaimStore;
  /** $submit calls that passed the checks, by Bundle.identifier (`system|value`). */
  submissions: Map<string, number>;
  /** The faults served already: each *-once member fails once per claim and operation. */
  faultsServed: Set<string>;
  now: () => Date;
  maxBodyBytes: number;
}

const VERDICT_OF: Partial<Record<MemberRule, ClaimVerdict>> = {
  approve: 'approved',
  deny: 'denied',
  pend: 'pended',
  'pend-for-documents': 'pended',
  partial: 'partially_approved',
  'rate-limited-once': 'approved',
  'unavailable-once': 'approved',
};

/** Answers the fault of a *-once member the first time for `key`; true when it did. */
function servedFault(state: PayerState, res: ServerResponse, rule: MemberRule | undefined, key: string): boolean {
  if (rule !== 'rate-limited-once' && rule !== 'unavailable-once') return false;
  if (state.faultsServed.has(key)) return false;
  state.faultsServed.add(key);
  if (rule === 'rate-limited-once') {
    sendFhir(res, 429, outcomeOf('throttled', 'Too many requests: try again later.'), { 'retry-after': '1' });
  } else {
    sendFhir(res, 503, outcomeOf('transient', 'The service is unavailable: try again later.'));
  }
  return true;
}

export const bundleOfClaim = (stored: StoredClaim, identifier: Bundle['identifier'], now: Date) =>
  withDocumentationRequests(
    stored,
    responseBundleOf(claimResponseOf(stored), stored.request, identifier, now.toISOString()),
  );

/** The answer for a member the payer does not insure: an error outcome (X12 AAA 75) with its path; no claim. */
function unknownMemberAnswer(state: PayerState, request: Bundle, claim: Claim): Bundle {
  const path = `Bundle.entry[${coverageOf(request, claim)!.index}].resource.subscriberId`;
  const reject = { code: '75', display: 'Subscriber/Insured Not Found', path };
  const now = state.now().toISOString();
  const claimResponse = errorResponseOf(request, claim, reject, randomUUID(), now);
  return responseBundleOf(claimResponse, request, request.identifier, now);
}

/** POST /fhir/Claim/$submit. */
export async function submit(state: PayerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const client = clientOfBearer(req, state.tokens, state.clients.get);
  const request = await checkedBundle(req, 'request', state.maxBodyBytes);
  const claim = claimOf(request)!;
  const bundleIdentifier = identifierKey(request.identifier)!;
  state.submissions.set(bundleIdentifier, (state.submissions.get(bundleIdentifier) ?? 0) + 1);
  const answer = (bundle: Bundle) =>
    sendFhir(
      res,
      200,
      shaped(client.answerShape, [bundle], () => bundle),
    );
  // A Bundle seen before: its claim as it is now, and no second claim.
  const known = state.claims.find(client.clientId, bundleIdentifier);
  if (known) return answer(bundleOfClaim(known, request.identifier, state.now()));
  const rule = PAS_MEMBER_RULES.get(memberIdOf(request, claim)!);
  if (rule === 'hang') return; // never answered; close() drops the connection
  if (servedFault(state, res, rule, `submit\u0000${client.clientId}\u0000${bundleIdentifier}`)) return;
  const verdict = rule && VERDICT_OF[rule];
  if (!verdict) return answer(unknownMemberAnswer(state, request, claim));
  const stored = state.claims.create({ clientId: client.clientId, request, claim, verdict });
  answer(bundleOfClaim(stored, request.identifier, state.now()));
}

/** POST /fhir/Claim/$inquire: the current answer of each matching claim, newest first. */
export async function inquire(state: PayerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const client = clientOfBearer(req, state.tokens, state.clients.get);
  const inquiry = await checkedBundle(req, 'inquiry', state.maxBodyBytes);
  const rule = PAS_MEMBER_RULES.get(memberIdOf(inquiry, claimOf(inquiry)!)!);
  if (rule === 'hang') return; // never answered
  const found = matchingClaims(state.claims.all(), inquiry);
  if (found[0] && servedFault(state, res, rule, `inquire\u0000${found[0].id}`)) return;
  const now = state.now();
  const bundles = found.map((stored) => bundleOfClaim(stored, inquiry.identifier, now));
  const empty = (): Bundle => ({
    resourceType: 'Bundle',
    ...(inquiry.identifier ? { identifier: inquiry.identifier } : {}),
    type: 'collection',
    timestamp: now.toISOString(),
  });
  sendFhir(res, 200, shaped(client.answerShape, bundles, empty));
}

/** Refused as FHIR: the refusal's OperationOutcome, or a generic one (nothing of the cause is echoed). */
export const fhirRefusal = (res: ServerResponse, error: unknown) => {
  if (error instanceof Refusal) return sendFhir(res, error.status, error.body, error.headers);
  sendFhir(res, 500, outcomeOf('exception', 'Something went wrong.'));
};
