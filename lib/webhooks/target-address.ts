import { BlockList, isIP } from 'node:net';
import { Invalid } from '#lib/errors';

/**
 * Where a webhook may be sent (docs/webhooks.md, "No SSRF"): its URL, and every address its host
 * resolves to, checked when the subscription is made and again at each delivery (DNS may change
 * between the two: the delivery connects to the address checked then, never resolves twice).
 *
 * Classification is by the IANA special-purpose registries, on Node's own `net.BlockList`; an address
 * in none of them (and, for IPv6, in global unicast 2000::/3) is public. IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`, in any spelling) is classified as the IPv4 address it carries.
 */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'reserved';

/**
 * `public-https` (the default, and AWS): https only, public addresses only. `local` (`npm start`, the
 * tests): also http, and loopback, so a developer can receive on their own machine. Link-local and
 * the metadata addresses are refused under both.
 */
export type UrlPolicy = 'public-https' | 'local';

const ALLOWED: Record<UrlPolicy, readonly AddressKind[]> = {
  'public-https': ['public'],
  local: ['public', 'loopback'],
};

/** Most specific first: the metadata addresses before the link-local and unique-local blocks that hold them. */
const RANGES: ReadonlyArray<readonly [Exclude<AddressKind, 'public'>, string, number, 'ipv4' | 'ipv6']> = [
  ['metadata', '169.254.169.254', 32, 'ipv4'],
  ['metadata', 'fd00:ec2::254', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['cgnat', '100.64.0.0', 10, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['multicast', 'ff00::', 8, 'ipv6'],
  // IETF protocol assignments, documentation, 6to4 relays, benchmarking, class E and broadcast.
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['reserved', '192.88.99.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  // IPv4-compatible, NAT64 (which reaches IPv4 behind a translator), discard, IETF assignments
  // (Teredo within), documentation, 6to4, SRv6, site-local.
  ['reserved', '::', 96, 'ipv6'],
  ['reserved', '64:ff9b::', 96, 'ipv6'],
  ['reserved', '64:ff9b:1::', 48, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'],
  ['reserved', '2001::', 23, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['reserved', '2002::', 16, 'ipv6'],
  ['reserved', '3fff::', 20, 'ipv6'],
  ['reserved', '5f00::', 16, 'ipv6'],
  ['reserved', 'fec0::', 10, 'ipv6'],
];

const blocks = RANGES.map(([kind, network, prefix, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { kind, list, family };
});

const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');

/** `::ffff:a.b.c.d` or `::ffff:xxxx:yyyy` (as the URL parser writes it), as the IPv4 address it carries. */
const mappedIpv4 = (address: string): string | undefined => {
  const hostname = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const match = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(hostname);
  if (!match) return undefined;
  const [high, low] = [Number.parseInt(match[1]!, 16), Number.parseInt(match[2]!, 16)];
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
};

/** What kind of address this is; throws on anything that is not an IP address. */
export const classifyAddress = (input: string): AddressKind => {
  // A zone (`fe80::1%eth0`) only scopes a link-local address to an interface.
  const address = input.replace(/%.*$/, '');
  const version = isIP(address);
  if (version === 0) throw new Error('Not an IP address');
  if (version === 6) {
    const ipv4 = mappedIpv4(address);
    if (ipv4) return classifyAddress(ipv4);
  }
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const block = blocks.find((candidate) => candidate.family === family && candidate.list.check(address, family));
  if (block) return block.kind;
  return family === 'ipv6' && !globalUnicast.check(address, 'ipv6') ? 'reserved' : 'public';
};

export const isAllowedAddress = (address: string, policy: UrlPolicy) =>
  ALLOWED[policy].includes(classifyAddress(address));

/** The host of a URL as an IP address (brackets removed), if it is one. */
const ipLiteralOf = (url: URL) => {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? host : undefined;
};

/** RFC 6761: `localhost` and its subdomains are loopback, whatever a resolver says. */
const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);

/** Why a URL is refused, for the client (field `url`); nothing of the URL itself is quoted. */
const refuse = (message: string) => new Invalid(message, { field: 'url' });

/**
 * The URL, if a subscription may have it: absolute, https (or http under `local`), no user info or
 * fragment; a host that is an IP address or `localhost` must be allowed by the policy. A host name's
 * addresses are checked at each delivery (resolveAllowed).
 */
export const checkWebhookUrl = (raw: string, policy: UrlPolicy): URL => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('url must be an absolute URL.');
  }
  const schemes = policy === 'local' ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw refuse(policy === 'local' ? 'url must be an http or https URL.' : 'url must be an https URL.');
  }
  if (url.username || url.password) throw refuse('url must not carry a user name or password.');
  if (url.hash) throw refuse('url must not have a fragment.');
  const literal = ipLiteralOf(url);
  const kind = literal ? classifyAddress(literal) : isLocalhostName(url.hostname) ? 'loopback' : undefined;
  if (kind && !ALLOWED[policy].includes(kind)) {
    throw refuse(
      `url must not name a ${kind} address: webhooks are sent to ${ALLOWED[policy].join(' or ')} addresses only.`,
    );
  }
  return url;
};

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A resolver of every address of a name (node:dns's `lookup` with `all: true` by default). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

/** Why an address was not used: the name did not resolve, or an address is not allowed. */
export class TargetRefused extends Error {
  constructor(readonly reason: 'dns_failed' | 'address_refused') {
    super(
      reason === 'dns_failed' ? 'The host name did not resolve' : 'The URL resolves to an address that is not allowed',
    );
    this.name = 'TargetRefused';
  }
}

/**
 * The address to connect to: every address the host resolves to must be allowed (one refused address
 * refuses them all: a resolver may answer in any order), then the first is used.
 */
export const resolveAllowed = async (url: URL, policy: UrlPolicy, resolve: Resolve): Promise<ResolvedAddress> => {
  const literal = ipLiteralOf(url);
  if (!literal && isLocalhostName(url.hostname) && !ALLOWED[policy].includes('loopback')) {
    throw new TargetRefused('address_refused');
  }
  let addresses: ResolvedAddress[];
  if (literal) addresses = [{ address: literal, family: isIP(literal) as 4 | 6 }];
  else {
    try {
      addresses = await resolve(url.hostname);
    } catch {
      throw new TargetRefused('dns_failed');
    }
  }
  if (addresses.length === 0) throw new TargetRefused('dns_failed');
  if (!addresses.every(({ address }) => isAllowedAddress(address, policy))) throw new TargetRefused('address_refused');
  return addresses[0]!;
};
