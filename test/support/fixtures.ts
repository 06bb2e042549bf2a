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
