import { describe, expect, it } from 'vitest';
import { checkedPayerEndpoint, DEFAULT_PAYER_SCOPE } from '#lib/payer-endpoints/payer-endpoint-input';
import { type PayerUrlPolicy, payerUrlProblem } from '#lib/payer-endpoints/payer-endpoint-url';

/**
 * What `set-payer-endpoint` accepts (docs/payer-connections.md, "Payer endpoints"): its URL rule under
 * each deployment's policy, and the payer id, name and scopes. The CLI's own wiring (options, exit
 * codes, AWS or local): test/integration/admin-cli-payer-endpoints.test.ts.
 */
const problemsOf = (policy: PayerUrlPolicy, urls: string[], options?: { query?: boolean }) =>
  Object.fromEntries(urls.map((url) => [url, payerUrlProblem(url, policy, options)]));

describe('payerUrlProblem', () => {
  it('takes https anywhere public, under both policies', () => {
    const urls = ['https://payer.example/fhir', 'https://payer.example:8443/r4/', 'https://93.184.216.34/fhir'];
    for (const policy of ['public-https', 'local'] as const) {
      expect(problemsOf(policy, urls)).toEqual(Object.fromEntries(urls.map((url) => [url, undefined])));
    }
  });

  it('takes http on a loopback host only locally; on AWS, loopback and http are refused', () => {
    const loopback = [
      'http://127.0.0.1:4010/fhir',
      'http://127.9.9.9/fhir',
      'http://localhost:4010/fhir',
      'http://[::1]:4010/fhir',
      'http://api.localhost/fhir',
      'https://localhost/fhir',
      'http://[::ffff:127.0.0.1]/fhir',
    ];
    expect(problemsOf('local', loopback)).toEqual(Object.fromEntries(loopback.map((url) => [url, undefined])));
    expect(problemsOf('public-https', loopback)).toEqual({
      'http://127.0.0.1:4010/fhir': 'must be https',
      'http://127.9.9.9/fhir': 'must be https',
      'http://localhost:4010/fhir': 'must be https',
      'http://[::1]:4010/fhir': 'must be https',
      'http://api.localhost/fhir': 'must be https',
      'https://localhost/fhir': 'must not name a loopback address',
      'http://[::ffff:127.0.0.1]/fhir': 'must be https',
    });
    const elsewhere = [
      'http://payer.example/fhir',
      'http://10.0.0.8/fhir',
      'http://192.168.1.2/fhir',
      'ftp://payer.example/fhir',
    ];
    for (const url of elsewhere) {
      expect(payerUrlProblem(url, 'local'), url).toBe('must be https (or http on a loopback host)');
      expect(payerUrlProblem(url, 'public-https'), url).toBe('must be https');
    }
  });

  it('refuses addresses no payer has, credentials, fragments, a base URL’s query, and what is not a URL', () => {
    for (const policy of ['public-https', 'local'] as const) {
      expect(
        problemsOf(policy, [
          'https://169.254.169.254/latest',
          'https://[fd00:ec2::254]/',
          'https://169.254.10.1/fhir',
          'https://10.1.2.3/fhir',
          'https://100.64.0.1/fhir',
          'https://0.0.0.0/fhir',
          'https://user:pw@payer.example/fhir',
          'https://payer.example/fhir#part',
          'https://payer.example/fhir#',
          'payer.example/fhir',
          `https://payer.example/${'x'.repeat(2048)}`,
        ]),
      ).toEqual({
        'https://169.254.169.254/latest': 'must not name a metadata address',
        'https://[fd00:ec2::254]/': 'must not name a metadata address',
        'https://169.254.10.1/fhir': 'must not name a link-local address',
        'https://10.1.2.3/fhir': 'must not name a private address',
        'https://100.64.0.1/fhir': 'must not name a cgnat address',
        'https://0.0.0.0/fhir': 'must not name an unspecified address',
        'https://user:pw@payer.example/fhir': 'must not carry a user name or password',
        'https://payer.example/fhir#part': 'must not have a fragment',
        'https://payer.example/fhir#': 'must not have a fragment',
        'payer.example/fhir': 'must be an absolute URL',
        [`https://payer.example/${'x'.repeat(2048)}`]: 'must be at most 2048 characters',
      });
    }
    expect(payerUrlProblem('https://payer.example/token?realm=pas', 'public-https')).toBeUndefined();
    expect(payerUrlProblem('https://payer.example/fhir?tenant=1', 'public-https', { query: false })).toBe(
      'must not have a query',
    );
    expect(payerUrlProblem('https://payer.example/fhir?', 'public-https', { query: false })).toBe(
      'must not have a query',
    );
  });
});

describe('checkedPayerEndpoint', () => {
  const valid = {
    payerId: '87726',
    fhirBaseUrl: 'https://Payer.Example/fhir/r4//',
    tokenUrl: 'https://payer.example/oauth2/token',
  };

  it('stores a base URL without its trailing slashes, and the defaults of what is not given', () => {
    expect(checkedPayerEndpoint(valid, 'public-https')).toEqual({
      payerId: '87726',
      name: null,
      fhirBaseUrl: 'https://payer.example/fhir/r4',
      tokenUrl: 'https://payer.example/oauth2/token',
      scope: DEFAULT_PAYER_SCOPE,
      decisionTimeframes: 'cms-0057-f',
      attachmentSubmission: 'claim-update',
      subscriptions: 'none',
    });
    expect(DEFAULT_PAYER_SCOPE).toBe('system/Claim.write system/ClaimResponse.read');
  });

  it('takes the decision timeframes a payer is held to: cms-0057-f or none, nothing else', () => {
    const timeframesOf = (decisionTimeframes: string) =>
      checkedPayerEndpoint({ ...valid, decisionTimeframes }, 'public-https').decisionTimeframes;
    expect(timeframesOf('none')).toBe('none');
    expect(timeframesOf('cms-0057-f')).toBe('cms-0057-f');
    expect(() => timeframesOf('CMS-0057-F')).toThrow('--decision-timeframes takes cms-0057-f or none.');
    expect(() => timeframesOf('')).toThrow('--decision-timeframes');
  });

  it('takes how requested documents reach the payer: claim-update or cdex, nothing else', () => {
    const submissionOf = (attachmentSubmission: string) =>
      checkedPayerEndpoint({ ...valid, attachmentSubmission }, 'public-https').attachmentSubmission;
    expect(submissionOf('cdex')).toBe('cdex');
    expect(submissionOf('claim-update')).toBe('claim-update');
    expect(() => submissionOf('CDex')).toThrow('--attachment-submission takes claim-update or cdex.');
    expect(() => submissionOf('')).toThrow('--attachment-submission');
  });

  it('takes whether the payer takes PAS subscriptions: rest-hook or none, nothing else', () => {
    const subscriptionsOf = (subscriptions: string) =>
      checkedPayerEndpoint({ ...valid, subscriptions }, 'public-https').subscriptions;
    expect(subscriptionsOf('rest-hook')).toBe('rest-hook');
    expect(subscriptionsOf('none')).toBe('none');
    expect(() => subscriptionsOf('websocket')).toThrow('--subscriptions takes rest-hook or none.');
  });

  it('takes scopes as RFC 6749 tokens, one space apart, bounded, system/ only among SMART contexts', () => {
    const scopeOf = (scope: string) => checkedPayerEndpoint({ ...valid, scope }, 'public-https').scope;
    expect(scopeOf('  system/Claim.c   system/ClaimResponse.r ')).toBe('system/Claim.c system/ClaimResponse.r');
    expect(scopeOf('system/*.read pas:submit')).toBe('system/*.read pas:submit');
    expect(scopeOf(Array.from({ length: 20 }, (_, i) => `s${i}`).join(' '))).toMatch(/^s0 s1 .* s19$/);
    for (const [scope, message] of [
      ['', /^--scope takes 1 to 20 space-separated scopes/],
      [Array.from({ length: 21 }, (_, i) => `s${i}`).join(' '), /^--scope takes 1 to 20/],
      ['system/Claim.write\tsystem/ClaimResponse.read', /RFC 6749/],
      ['system/"Claim"', /RFC 6749/],
      ['system/Claim\\.write', /RFC 6749/],
      [`system/${'C'.repeat(128)}`, /each at most 128/],
      ['system/é', /RFC 6749/],
      ['user/Claim.read', /^--scope takes system\/ scopes/],
      ['patient/*.read', /^--scope takes system\/ scopes/],
      ['system/Claim.write system/Claim.write', /^--scope names a scope twice\.$/],
    ] as const) {
      expect(() => scopeOf(scope), scope).toThrow(message);
    }
  });

  it('takes the payer ids a request can name, and a plain name', () => {
    expect(checkedPayerEndpoint({ ...valid, payerId: 'SX.09:a-b_c', name: 'Aetna – PA' }, 'local')).toMatchObject({
      payerId: 'SX.09:a-b_c',
      name: 'Aetna – PA',
    });
    for (const payerId of ['', ' 87726', '87726 ', '-87726', 'a/b', 'a#b', 'P'.repeat(81)]) {
      expect(() => checkedPayerEndpoint({ ...valid, payerId }, 'local'), payerId).toThrow(/^A payer id is 1 to 80/);
    }
    for (const name of ['', '  ', ' padded', 'line\nbreak', 'x'.repeat(101)]) {
      expect(() => checkedPayerEndpoint({ ...valid, name }, 'local'), name).toThrow(/^--name takes 1 to 100/);
    }
  });

  it('names the option whose URL is refused', () => {
    expect(() => checkedPayerEndpoint({ ...valid, fhirBaseUrl: 'http://payer.example' }, 'local')).toThrow(
      '--fhir-base-url must be https (or http on a loopback host).',
    );
    expect(() => checkedPayerEndpoint({ ...valid, tokenUrl: 'http://127.0.0.1/token' }, 'public-https')).toThrow(
      '--token-url must be https.',
    );
  });
});
