/**
 * The sandbox payer portal's data: its users, the members it insures and the authorizations it
 * has decided. All fictional. The demo seed (local/seed.ts) stores the same users as the demo
 * organization's portal accounts and creates the DEMO-* requests with these members, so that
 * the automation finds what these tables say.
 */
export const SANDBOX_PAYER_ID = 'SANDBOX';

export interface SandboxUser {
  username: string;
  password: string;
  /** Base32 (RFC 4648) TOTP secret; users that have one are asked for a code after their password. */
  totpSecret: string | null;
}

export interface SandboxMember {
  memberId: string;
  firstName: string;
  lastName: string;
  birthDate: string;
}

export type SandboxDecision = 'approved' | 'partially_approved' | 'denied' | 'pended';

export interface SandboxAuthorization {
  memberId: string;
  /** The provider's reference given when the request was submitted: the request's externalId. */
  reference: string;
  status: SandboxDecision;
  /** The first date of service; a lookup that names another one finds nothing. */
  fromDate: string;
  number?: string;
  decisionDate?: string;
}

export interface SandboxSeed {
  users: SandboxUser[];
  members: SandboxMember[];
  authorizations: SandboxAuthorization[];
  /** A status lookup for this member never gets an answer: the worker's timeout path, end to end. */
  hangMemberId?: string;
}

export const SANDBOX_USERS = [
  { username: 'demo-sandbox', password: 'sandbox-demo-password', totpSecret: null },
  {
    username: 'demo-sandbox-totp',
    password: 'sandbox-demo-totp-password',
    totpSecret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
  },
] as const satisfies readonly SandboxUser[];

export const SANDBOX_MEMBERS = [
  { memberId: 'SBX-10001', firstName: 'Avery', lastName: 'Sandbox', birthDate: '1975-04-12' },
  { memberId: 'SBX-10002', firstName: 'Jordan', lastName: 'Sandbox', birthDate: '1988-09-30' },
  { memberId: 'SBX-10003', firstName: 'Casey', lastName: 'Sandbox', birthDate: '1962-01-15' },
  { memberId: 'SBX-10004', firstName: 'Riley', lastName: 'Sandbox', birthDate: '1999-06-01' },
  { memberId: 'SBX-99999', firstName: 'Slow', lastName: 'Sandbox', birthDate: '1970-01-01' },
] as const satisfies readonly SandboxMember[];

/** The first date of service of every demo request. */
export const SANDBOX_SERVICE_FROM_DATE = '2026-03-02';

export const SANDBOX_AUTHORIZATIONS = [
  {
    memberId: 'SBX-10001',
    reference: 'DEMO-APPROVED',
    status: 'approved',
    fromDate: SANDBOX_SERVICE_FROM_DATE,
    number: 'SBX-AUTH-000101',
    decisionDate: '2026-02-20',
  },
  {
    memberId: 'SBX-10002',
    reference: 'DEMO-DENIED',
    status: 'denied',
    fromDate: SANDBOX_SERVICE_FROM_DATE,
    decisionDate: '2026-02-21',
  },
  { memberId: 'SBX-10003', reference: 'DEMO-PENDED', status: 'pended', fromDate: SANDBOX_SERVICE_FROM_DATE },
] as const satisfies readonly SandboxAuthorization[];

export const SANDBOX_HANG_MEMBER_ID = 'SBX-99999';

/** The demo requests and the member each is for; the portal has no authorization for DEMO-UNKNOWN. */
export const SANDBOX_DEMO_MEMBERS = {
  'DEMO-APPROVED': 'SBX-10001',
  'DEMO-DENIED': 'SBX-10002',
  'DEMO-PENDED': 'SBX-10003',
  'DEMO-UNKNOWN': 'SBX-10004',
} as const satisfies Record<string, string>;

export const sandboxSeed: SandboxSeed = {
  users: [...SANDBOX_USERS],
  members: [...SANDBOX_MEMBERS],
  authorizations: [...SANDBOX_AUTHORIZATIONS],
  hangMemberId: SANDBOX_HANG_MEMBER_ID,
};
