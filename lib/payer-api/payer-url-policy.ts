import { classifyAddress } from '#lib/webhooks/target-address';
import { PayerUrlRefused } from './errors.ts';

/**
 * Which payer URLs (a FHIR base URL, a token URL) may be called, checked where an operator sets them
 * (the admin CLI) and again before every call (the table could hold one set under another policy).
 *
 * `https` (AWS, the default): https only; a host written as an IP address must be a public one (never the
 * metadata service, a private or a loopback address). `local` (`npm start`, PAYER_URL_POLICY=local): also
 * plain http to a loopback host (`localhost`, 127.0.0.0/8, [::1]), where the local PAS payer listens, as
 * the sandbox portal's origin is allowed locally (lib/rpa/drivers/registry.ts). Under both: no user name
 * or password in the URL (a payer authenticates us by our client assertion, never by URL), no fragment.
 */
export type PayerUrlPolicy = 'https' | 'local';

/** RFC 6761: `localhost` and its subdomains are loopback, whatever a resolver says. */
const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);

/** What the host is, when it says so itself: an IP literal's kind, `localhost`'s loopback, or unknown (a name). */
const hostKindOf = (url: URL) => {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  try {
    return classifyAddress(host);
  } catch {
    return isLocalhostName(host) ? 'loopback' : undefined;
  }
};

/** The URL, parsed, if the policy allows calling it; else PayerUrlRefused saying why (never quoting it). */
export const checkPayerUrl = (raw: string, policy: PayerUrlPolicy): URL => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new PayerUrlRefused('is not an absolute URL');
  }
  if (url.username || url.password) throw new PayerUrlRefused('must not carry a user name or password');
  if (url.hash) throw new PayerUrlRefused('must not have a fragment');
  const kind = hostKindOf(url);
  if (url.protocol === 'http:' && policy === 'local' && kind === 'loopback') return url;
  if (url.protocol !== 'https:') {
    throw new PayerUrlRefused(policy === 'local' ? 'must be https (or http on a loopback host)' : 'must be https');
  }
  const allowed = policy === 'local' ? ['public', 'loopback'] : ['public'];
  if (kind !== undefined && !allowed.includes(kind)) throw new PayerUrlRefused(`must not name a ${kind} address`);
  return url;
};
