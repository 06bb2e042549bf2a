import { describe, expect, it } from 'vitest';
import { PayerUrlRefused } from '#lib/payer-api/errors';
import { checkPayerUrl } from '#lib/payer-api/payer-url-policy';

describe('checkPayerUrl', () => {
  it.each([
    ['https://fhir.payer.example/pas/r4', 'https'],
    ['https://fhir.payer.example:8443/r4', 'https'],
    ['https://203.0.114.7/fhir', 'https'],
    ['https://fhir.payer.example/r4', 'local'],
    ['http://127.0.0.1:3101/fhir', 'local'],
    ['http://localhost:3101/auth/token', 'local'],
    ['http://[::1]:3101/fhir', 'local'],
    ['https://127.0.0.1:3101/fhir', 'local'],
  ] as const)('allows %s under %s', (url, policy) => {
    expect(checkPayerUrl(url, policy).href).toBe(new URL(url).href);
  });

  it.each([
    ['http://fhir.payer.example/r4', 'https', 'must be https'],
    ['http://127.0.0.1:3101/fhir', 'https', 'must be https'],
    ['http://fhir.payer.example/r4', 'local', 'must be https (or http on a loopback host)'],
    ['http://10.0.0.5/fhir', 'local', 'must be https (or http on a loopback host)'],
    ['https://127.0.0.1/fhir', 'https', 'must not name a loopback address'],
    ['https://localhost/fhir', 'https', 'must not name a loopback address'],
    ['https://169.254.169.254/latest', 'https', 'must not name a metadata address'],
    ['https://169.254.169.254/latest', 'local', 'must not name a metadata address'],
    ['https://10.1.2.3/fhir', 'https', 'must not name a private address'],
    ['https://[::ffff:10.1.2.3]/fhir', 'https', 'must not name a private address'],
    ['https://user:secret@fhir.payer.example/r4', 'https', 'must not carry a user name or password'],
    ['https://fhir.payer.example/r4#x', 'https', 'must not have a fragment'],
    ['fhir.payer.example/r4', 'https', 'is not an absolute URL'],
    ['ftp://fhir.payer.example/r4', 'local', 'must be https (or http on a loopback host)'],
  ] as const)('refuses %s under %s: %s', (url, policy, problem) => {
    const refusal = (() => {
      try {
        checkPayerUrl(url, policy);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toEqual(new PayerUrlRefused(problem));
    // Never quoted: a URL may carry a secret.
    expect((refusal as Error).message).not.toContain('secret');
  });
});
