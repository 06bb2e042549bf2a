import { SANDBOX_HANG_MEMBER_ID, SANDBOX_MEMBERS } from '../sandbox-portal/seed.ts';

/**
 * The local PAS payer's data: the members it insures and how it decides for each, by the member id a
 * submitted Bundle names (the Coverage's subscriber id). The sandbox portal's members keep their meaning
 * here (SBX-10001 approved, SBX-10002 denied, SBX-10003 pended, SBX-99999 never answered), so one demo
 * request reads alike through either channel. All fictional; docs/pas-payer.md has the table.
 */
/**
 * What the payer does with a submission for a member:
 * - `approve`, `deny`, `pend`: every item certified (A1), not certified (A3), pended (A4);
 * - `pend-for-documents`: pended, and the answer asks for documentation while it stays so;
 * - `partial`: the first item certified and the others not (one item: certified in part, A2);
 * - `hang`: no answer at all, past PAS's 15 s (the client's timeout);
 * - `rate-limited-once`, `unavailable-once`: the first call of a kind for a claim answers 429 with
 *   Retry-After, or 503, and the next one is served as `approve` (the client's retries).
 */
export type MemberRule =
  | 'approve'
  | 'deny'
  | 'pend'
  | 'pend-for-documents'
  | 'partial'
  | 'hang'
  | 'rate-limited-once'
  | 'unavailable-once';

export const PAS_PARTIAL_MEMBER_ID = 'SBX-10005';
export const PAS_RATE_LIMITED_MEMBER_ID = 'SBX-10006';
export const PAS_UNAVAILABLE_MEMBER_ID = 'SBX-10007';
/** Pended with a request for documentation (documentation-requests.ts). */
export const PAS_DOCUMENTS_MEMBER_ID = 'SBX-10008';

const [approved, denied, pended, unknownToPortal] = SANDBOX_MEMBERS.map((member) => member.memberId);

/** Member id → rule. A member not here is unknown: the answer is an error outcome (X12 AAA 75). */
export const PAS_MEMBER_RULES: ReadonlyMap<string, MemberRule> = new Map<string, MemberRule>([
  [approved!, 'approve'],
  [denied!, 'deny'],
  [pended!, 'pend'],
  // The portal has no authorization for this member: a submission here is one a reviewer looks at.
  [unknownToPortal!, 'pend'],
  [PAS_PARTIAL_MEMBER_ID, 'partial'],
  [PAS_RATE_LIMITED_MEMBER_ID, 'rate-limited-once'],
  [PAS_UNAVAILABLE_MEMBER_ID, 'unavailable-once'],
  [PAS_DOCUMENTS_MEMBER_ID, 'pend-for-documents'],
  [SANDBOX_HANG_MEMBER_ID, 'hang'],
]);

/** A reason the payer gives for an item it did not certify, or pended. */
export interface ReasonCode {
  code: string;
  display: string;
}

/**
 * Review decision reasons (HCR03). PAS binds them to X12's code source 886, whose list is licensed: these
 * codes are the sandbox's own, in that system, marked as such so nobody mistakes them for X12's.
 */
export const REVIEW_REASON_SYSTEM = 'https://codesystem.x12.org/external/886';
export const DENIAL_REASONS = [
  { code: 'SBX-MN', display: 'Medical necessity not established (sandbox code)' },
  { code: 'SBX-NC', display: 'Service not covered by the plan (sandbox code)' },
  { code: 'SBX-ID', display: 'Insufficient documentation (sandbox code)' },
] as const satisfies readonly ReasonCode[];
export const PEND_REASON: ReasonCode = { code: 'SBX-MR', display: 'Medical review required (sandbox code)' };
