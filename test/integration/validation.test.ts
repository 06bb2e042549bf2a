import { beforeAll, describe, expect, it } from 'vitest';
import { VALUE_IN_ERROR_MAX_CHARS } from '#lib/validation/error-text';
import { call, newTenant, uniqueId } from '#test/support/api';
import { minimalRequest, validRequest } from '#test/support/fixtures';

let apiKey: string;
beforeAll(async () => {
  ({ apiKey } = await newTenant('validation'));
});

const validateRequest = async (body: unknown) => {
  const res = await call('POST', '/api/external/v1.1/Schemas/Request/validate', { apiKey, body });
  expect(res.status).toBe(200);
  return res.body as { succeeded: boolean; errors: string[]; type: string };
};

describe('Validation result and error texts (spec: Errors)', () => {
  it('a valid payload: succeeded true, no errors, type none', async () => {
    expect(await validateRequest(validRequest('ok-1'))).toEqual({ succeeded: true, errors: [], type: 'none' });
  });

  it('small values use the first format: {valuePath}: {errorType} error for value "{value}". Message: {message}.', async () => {
    const result = await validateRequest({ ...minimalRequest('x'), serviceTypeCode: 'ZZ' });
    expect(result).toEqual({
      succeeded: false,
      errors: ['/serviceTypeCode: Enum error for value "ZZ". Message: must be equal to one of the allowed values.'],
      type: 'none',
    });
  });

  it('objects and arrays use the second format: {valuePath}: {errorType} error. {message}.', async () => {
    const result = await validateRequest({ ...minimalRequest('x'), patient: ['not', 'an', 'object'], diagnoses: {} });
    expect(result.errors).toEqual(['/patient: Type error. must be object.', '/diagnoses: Type error. must be array.']);
  });

  it('one Required error per object, at that object, listing every missing name; the root is /', async () => {
    const result = await validateRequest({ patient: { firstName: 'Ann' }, requestingProvider: { npi: '1234567893' } });
    expect(result.errors).toEqual([
      "/: Required error. must have required properties 'externalId', 'admissionTypeCode', 'serviceTypeCode', 'placeOfServiceCode'.",
      "/patient: Required error. must have required properties 'lastName', 'birthDate', 'memberId'.",
      "/requestingProvider: Required error. must have required property 'roleCode'.",
    ]);
  });

  it('array positions are nodes of the path', async () => {
    const result = await validateRequest({
      ...minimalRequest('x'),
      renderingProviders: [
        { roleCode: 'SJ', npi: '1234567893' },
        { roleCode: 'ZZ', npi: '1234567890' },
      ],
      diagnoses: [{ code: 'M54.5' }, { code: 'M54.5' }, { code: 'bad' }],
    });
    expect(result.errors).toEqual([
      '/renderingProviders/1/roleCode: Enum error for value "ZZ". Message: must be equal to one of the allowed values.',
      '/renderingProviders/1/npi: Format error for value "1234567890". Message: must match format "npi".',
      '/diagnoses/2/code: Pattern error for value "bad". Message: must match pattern "^[A-TV-Z][0-9][0-9A-Z](\\.?[0-9A-Z]{1,4})?$".',
    ]);
  });

  it('names each error type of the spec that the Request schema can raise', async () => {
    const result = await validateRequest({
      ...minimalRequest('x'),
      admissionTypeCode: 3,
      quantity: 100000,
      fromDate: '2026-02-30',
      patient: { ...minimalRequest('x').patient, firstName: '' },
      providerNotes: Array.from({ length: 11 }, () => 'note'),
      requestingProvider: { roleCode: '1P', taxId: '12-345' },
    });
    expect(result.errors).toEqual([
      '/admissionTypeCode: Type error for value "3". Message: must be string.',
      '/admissionTypeCode: Enum error for value "3". Message: must be equal to one of the allowed values.',
      '/fromDate: Format error for value "2026-02-30". Message: must match format "date".',
      '/quantity: Maximum error for value "100000". Message: must be <= 99999.',
      '/patient/firstName: MinLength error for value "". Message: must NOT have fewer than 1 characters.',
      "/requestingProvider: Required error. must have at least one of the properties 'npi', 'lastName', 'organizationName'.",
      '/requestingProvider/taxId: Pattern error for value "12-345". Message: must match pattern "^[0-9]{9}$".',
      '/providerNotes: MaxItems error. must NOT have more than 10 items.',
    ]);
  });

  it('refuses unknown properties, naming them once per object', async () => {
    const result = await validateRequest({ ...minimalRequest('x'), servicetypecode: '1', extra: true });
    expect(result.errors).toEqual([
      "/: AdditionalProperties error. must NOT have additional properties 'servicetypecode', 'extra'.",
    ]);
  });

  it(`includes a value of up to ${VALUE_IN_ERROR_MAX_CHARS} characters, and not one character more`, async () => {
    const atLimit = 'x'.repeat(VALUE_IN_ERROR_MAX_CHARS);
    const overLimit = 'x'.repeat(VALUE_IN_ERROR_MAX_CHARS + 1);
    const included = await validateRequest({ ...minimalRequest('x'), placeOfServiceCode: atLimit });
    expect(included.errors).toEqual([
      `/placeOfServiceCode: Enum error for value "${atLimit}". Message: must be equal to one of the allowed values.`,
    ]);
    const omitted = await validateRequest({ ...minimalRequest('x'), placeOfServiceCode: overLimit });
    expect(omitted.errors).toEqual(['/placeOfServiceCode: Enum error. must be equal to one of the allowed values.']);
  });

  it('an invalid request body on an endpoint gets 400 with the same Validation result', async () => {
    const body = { ...validRequest(uniqueId('v')), patient: { firstName: 'Ann' } };
    const direct = await validateRequest(body);
    const res = await call('POST', '/api/external/v1.1/Requests', { apiKey, body });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(direct);
    expect(direct.succeeded).toBe(false);
  });
});
