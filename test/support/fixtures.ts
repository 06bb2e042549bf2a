import type { AuditRecord } from '#lib/audit/audit-record';
import type { StoredPortalAccount } from '#lib/entities/portal-account';

/** A complete, valid request body (fictional patient; NPI 1234567893 has a valid check digit). */
export const validRequest = (externalId: string) => ({
  externalId,
  requestTypeCode: 'HS',
  certificationTypeCode: 'I',
  serviceTypeCode: '1',
  placeOfServiceCode: '11',
  admissionTypeCode: '3',
  serviceLevelCode: 'E',
  fromDate: '2026-12-01',
  toDate: '2026-12-31',
  quantity: 3,
  quantityTypeCode: 'VS',
  patient: {
    firstName: 'Ann',
    lastName: 'Example',
    birthDate: '1980-02-03',
    genderCode: 'F',
    memberId: 'MBR-0001',
    Payer: 'Example Health Plan',
    PayerId: 'EHP01',
  },
  requestingProvider: { roleCode: '1P', npi: '1234567893', lastName: 'Doe', firstName: 'Jane' },
  renderingProviders: [{ roleCode: 'SJ', organizationName: 'Example Imaging' }],
  diagnoses: [{ qualifierCode: 'ABK', code: 'M54.5' }],
  procedures: [{ qualifierCode: 'HC', code: '72148', quantity: 1 }],
});

/** The smallest valid request: no procedures, no Payer/PayerId. */
export const minimalRequest = (externalId: string) => ({
  externalId,
  admissionTypeCode: '3',
  serviceTypeCode: '1',
  placeOfServiceCode: '11',
  patient: { firstName: 'Ann', lastName: 'Example', birthDate: '1980-02-03', memberId: 'MBR-0001' },
  requestingProvider: { roleCode: '1P', npi: '1234567893' },
});

/** The replaceable (non-secret) fields of a portal account's representation, as a PUT body. */
export const portalAccountReplacementOf = (account: Record<string, any>, overrides: Record<string, unknown> = {}) => ({
  clientUserId: account.clientUserId,
  portalId: account.portalId,
  payerIds: account.payerIds,
  displayName: account.displayName,
  username: account.username,
  status: account.status,
  ...overrides,
});

/**
 * A stored portal account to seed many through the store directly (no HTTP, no keyring): its
 * password is a stand-in of a local envelope's size, not a real envelope, so nothing can open it.
 * `n` orders the accounts: account n is created n seconds after 2026-01-01.
 */
export const storedPortalAccount = (
  ids: Pick<StoredPortalAccount, 'clientId' | 'organizationId' | 'clientUserId' | 'externalId'>,
  n: number,
  fields: Partial<StoredPortalAccount> = {},
): StoredPortalAccount => {
  const at = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  const bytes = (size: number, fill: number) => Buffer.alloc(size, fill).toString('base64');
  return {
    ...ids,
    portalId: 'availity',
    payerIds: ['COMMON'],
    displayName: `Clinic office ${n}`,
    username: `frontdesk-${n}@clinic.example`,
    status: 'active',
    lastLogin: null,
    attention: null,
    password: {
      v: 1,
      alg: 'AES-256-GCM',
      keyring: 'local',
      keyId: 'local:stand-in',
      edk: bytes(60, 1),
      iv: bytes(12, 2),
      ct: bytes(16, 3),
      tag: bytes(16, 4),
    },
    passwordChangedAt: at,
    totpSecret: null,
    totpSecretChangedAt: null,
    version: 1,
    createdAt: at,
    updatedAt: at,
    ...fields,
  };
};

/** The outcome record of a successful request read, with `change` applied. */
export const auditRecord = (change: Partial<AuditRecord> = {}): AuditRecord => ({
  phase: 'outcome',
  time: '2026-11-22T08:00:00.000Z',
  action: 'request.read',
  route: 'GET /api/external/v1.1/Requests/{externalId}',
  outcome: 200,
  clientId: 'client-1',
  credential: 'apiKey',
  keyId: 'key-1',
  clientUserId: null,
  resource: { type: 'request', ids: { requestExternalId: 'REQ-1' } },
  requestId: 'gw-1',
  lambdaRequestId: 'fn-1',
  sourceIp: '192.0.2.1',
  ...change,
});
