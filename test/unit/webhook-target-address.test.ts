import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AddressKind,
  checkWebhookUrl,
  classifyAddress,
  isAllowedAddress,
  resolveAllowed,
  TargetRefused,
} from '#lib/webhooks/target-address';

/**
 * The SSRF guard's address classifier and URL policy (lib/webhooks/target-address.ts): blocks drawn
 * at random, each in every spelling an attacker may use (IPv4-mapped in dotted or hex form, expanded
 * IPv6, zones), and the policy that allows loopback only locally and link-local and metadata nowhere.
 */
const octet = fc.integer({ min: 0, max: 255 });
const ipv4In = (first: number, second?: fc.Arbitrary<number>) =>
  fc.tuple(second ?? octet, octet, octet).map(([b, c, d]) => `${first}.${b}.${c}.${d}`);

/** The IPv4-mapped IPv6 spellings of an IPv4 address. */
const mappedForms = (ipv4: string) => {
  const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
  const hex = (high: number, low: number) => ((high << 8) | low).toString(16);
  return [`::ffff:${ipv4}`, `::FFFF:${hex(a, b)}:${hex(c, d)}`, `0:0:0:0:0:ffff:${hex(a, b)}:${hex(c, d)}`];
};

const publicIpv4 = fc
  .tuple(fc.integer({ min: 1, max: 223 }), octet, octet, octet)
  .map((parts) => parts.join('.'))
  .filter((address) => classifyAddress(address) === 'public');

describe('classifyAddress', () => {
  it.each<[string, AddressKind]>([
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['224.0.0.251', 'multicast'],
    ['ff02::fb', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['64:ff9b::a9fe:a9fe', 'reserved'],
    ['2002:a9fe:a9fe::1', 'reserved'],
    ['::a9fe:a9fe', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('classifies an IPv4-mapped address, in every spelling, as the IPv4 address it carries', () => {
    fc.assert(
      fc.property(fc.tuple(octet, octet, octet, octet), (parts) => {
        const ipv4 = parts.join('.');
        for (const form of mappedForms(ipv4)) expect(classifyAddress(form)).toBe(classifyAddress(ipv4));
      }),
    );
  });

  it('never allows link-local or metadata addresses, under either policy, in any spelling', () => {
    const linkLocal = ipv4In(169, fc.constant(254));
    const linkLocal6 = fc
      .tuple(fc.integer({ min: 0xfe80, max: 0xfebf }), fc.integer({ min: 0, max: 0xffff }))
      .map(([head, tail]) => `${head.toString(16)}::${tail.toString(16)}`);
    fc.assert(
      fc.property(
        fc.oneof(
          linkLocal,
          linkLocal.chain((a) => fc.constantFrom(...mappedForms(a))),
          linkLocal6,
        ),
        (a) => {
          expect(['link-local', 'metadata']).toContain(classifyAddress(a));
          expect(isAllowedAddress(a, 'local')).toBe(false);
          expect(isAllowedAddress(a, 'public-https')).toBe(false);
        },
      ),
    );
  });

  it('allows loopback only under the local policy', () => {
    fc.assert(
      fc.property(
        ipv4In(127).chain((a) => fc.constantFrom(a, ...mappedForms(a))),
        (address) => {
          expect(isAllowedAddress(address, 'local')).toBe(true);
          expect(isAllowedAddress(address, 'public-https')).toBe(false);
        },
      ),
    );
  });

  it('refuses every private and CGNAT address under both policies', () => {
    const privateOrCgnat = fc.oneof(
      ipv4In(10),
      ipv4In(172, fc.integer({ min: 16, max: 31 })),
      ipv4In(192, fc.constant(168)),
      ipv4In(100, fc.integer({ min: 64, max: 127 })),
    );
    fc.assert(
      fc.property(privateOrCgnat, (address) => {
        expect(['private', 'cgnat']).toContain(classifyAddress(address));
        for (const form of [address, ...mappedForms(address)]) {
          expect(isAllowedAddress(form, 'local')).toBe(false);
          expect(isAllowedAddress(form, 'public-https')).toBe(false);
        }
      }),
    );
  });

  it('allows public addresses under both policies', () => {
    fc.assert(
      fc.property(publicIpv4, (address) => {
        expect(isAllowedAddress(address, 'public-https')).toBe(true);
        expect(isAllowedAddress(address, 'local')).toBe(true);
      }),
    );
  });
});

describe('checkWebhookUrl', () => {
  it('takes https URLs of names and public addresses under the AWS policy, and normalizes them', () => {
    expect(checkWebhookUrl('https://Hooks.Example.com:8443/a?b=c', 'public-https').href).toBe(
      'https://hooks.example.com:8443/a?b=c',
    );
    expect(checkWebhookUrl('https://8.8.8.8/hook', 'public-https').hostname).toBe('8.8.8.8');
  });

  it.each([
    'http://hooks.example.com/',
    'https://localhost/',
    'https://app.localhost./',
    'https://127.0.0.1/',
    'https://[::1]/',
    'https://169.254.169.254/',
    'https://2852039166/',
    'https://0251.0376.0251.0376/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://user@hooks.example.com/',
    'https://hooks.example.com/#frag',
    'not a url',
  ])('refuses %s under the AWS policy', (url) => {
    expect(() => checkWebhookUrl(url, 'public-https')).toThrow(expect.objectContaining({ details: { field: 'url' } }));
  });

  it('allows http and loopback locally, never link-local or metadata', () => {
    expect(checkWebhookUrl('http://127.0.0.1:4000/hook', 'local').port).toBe('4000');
    expect(checkWebhookUrl('http://localhost:4000/hook', 'local').hostname).toBe('localhost');
    for (const url of ['http://169.254.169.254/', 'http://[fe80::1]/', 'http://[fd00:ec2::254]/', 'ftp://x/']) {
      expect(() => checkWebhookUrl(url, 'local')).toThrow();
    }
  });
});

describe('resolveAllowed', () => {
  const resolver = (addresses: string[]) => async () =>
    addresses.map((address) => ({ address, family: (address.includes(':') ? 6 : 4) as 4 | 6 }));

  it('refuses a name unless every address it resolves to is allowed, whatever their order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(publicIpv4, { minLength: 0, maxLength: 3 }),
        fc.constantFrom('169.254.169.254', '10.0.0.1', 'fe80::1', '::ffff:127.0.0.1', 'fd00:ec2::254'),
        fc.nat(),
        async (good, bad, at) => {
          const addresses = [...good];
          addresses.splice(at % (good.length + 1), 0, bad);
          await expect(
            resolveAllowed(new URL('https://hooks.example.com/'), 'public-https', resolver(addresses)),
          ).rejects.toEqual(new TargetRefused('address_refused'));
        },
      ),
    );
  });

  it('answers the first address when all are public; a name that does not resolve is dns_failed', async () => {
    const url = new URL('https://hooks.example.com/');
    expect(await resolveAllowed(url, 'public-https', resolver(['8.8.8.8', '2606:4700::1']))).toEqual({
      address: '8.8.8.8',
      family: 4,
    });
    await expect(resolveAllowed(url, 'public-https', resolver([]))).rejects.toEqual(new TargetRefused('dns_failed'));
    const failing = async () => {
      throw new Error('ENOTFOUND');
    };
    await expect(resolveAllowed(url, 'public-https', failing)).rejects.toEqual(new TargetRefused('dns_failed'));
  });

  it('never asks the resolver for localhost under the AWS policy, and uses an IP literal as it is', async () => {
    const unused = async () => {
      throw new Error('not to be called');
    };
    await expect(resolveAllowed(new URL('https://localhost/'), 'public-https', unused)).rejects.toEqual(
      new TargetRefused('address_refused'),
    );
    expect(await resolveAllowed(new URL('http://[::1]:80/'), 'local', unused)).toEqual({ address: '::1', family: 6 });
  });
});
