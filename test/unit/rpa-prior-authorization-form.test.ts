import { describe, expect, it } from 'vitest';
import { priorAuthorizationFormOf } from '#lib/portal/prior-authorization-form';
import { minimalRequest } from '#test/support/fixtures';

const formOf = (body: Record<string, unknown>) => {
  const { externalId, ...document } = body as { externalId: string };
  return priorAuthorizationFormOf({ externalId, document });
};

describe('the prior-authorization form of a stored request', () => {
  it('leaves what the request does not have blank, and has no rows for absent lists', () => {
    expect(formOf(minimalRequest('MIN-1'))).toEqual({
      reference: 'MIN-1',
      patient: { memberId: 'MBR-0001', firstName: 'Ann', lastName: 'Example', birthDate: '1980-02-03', payerId: '' },
      requestingProvider: { npi: '1234567893', firstName: '', lastName: '', organizationName: '', roleCode: '1P' },
      renderingProviders: [],
      serviceTypeCode: '1',
      placeOfServiceCode: '11',
      admissionTypeCode: '3',
      fromDate: '',
      toDate: '',
      diagnoses: [],
      procedures: [],
    });
  });

  it('reads procedures (stored as sent) defensively: strings and numbers, nothing else', () => {
    const form = formOf({
      ...minimalRequest('PROC-1'),
      procedures: [
        { qualifierCode: 'HC', code: '72148', quantity: 2, modifiers: ['26'] },
        { code: { nested: true }, quantity: Number.NaN },
        'not a procedure',
        null,
        { quantity: '1.5' },
      ],
    });
    expect(form.procedures).toEqual([
      { qualifierCode: 'HC', code: '72148', quantity: '2' },
      { qualifierCode: '', code: '', quantity: '1.5' },
    ]);
  });
});
