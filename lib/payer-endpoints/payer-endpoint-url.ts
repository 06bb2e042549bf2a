import { isIP } from 'node:net';
import { classifyAddress } from '#lib/webhooks/target-address';

/**
 * Where a payer's API may be (docs/payer-connections.md, "Payer endpoints"): https, or, on the local
 * stack only, http on a loopback host (the local PAS payer), as the sandbox portal's base URL may be
 * (lib/rpa/drivers/registry.ts). The policy is the deployment's URL policy (WEBHOOK_URL_POLICY:
 * `local` is set by the local stack alone; AWS has `public-https`).
 *
 * Every URL may carry our client assertion or an access token: no user name or password in it, no
 * fragment. A host written as an address must be a public one (under `local`, loopback too): an
 * operator's typo must not point the token client at the instance metadata service or the VPC.
 */
export type PayerUrlPolicy = 'public-https' | 'local';

/** Longer is not a URL an operator typed. */
const MAX_PAYER_URL_LENGTH = 2048;

/** RFC 6761: `localhost` and its subdomains are loopback, whatever a resolver says. */
const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname);

/** What kind of host the URL names when it is an address or `localhost`; undefined for a host name. */
const literalKindOf = (url: URL) => {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return classifyAddress(host);
  return isLocalhostName(url.hostname) ? 'loopback' : undefined;
};

/**
 * Why `raw` may not be a payer URL under `policy`, for an operator (the URL itself is not quoted), or
 * undefined when it may. `query`: whether a query string is allowed (a token endpoint may have one,
 * RFC 6749 §3.2; a FHIR base URL has paths appended to it, so none).
 */
export const payerUrlProblem = (
  raw: string,
  policy: PayerUrlPolicy,
  { query = true }: { query?: boolean } = {},
): string | undefined => {
  if (raw.length > MAX_PAYER_URL_LENGTH) return `must be at most ${MAX_PAYER_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  const kind = literalKindOf(url);
  const loopback = kind === 'loopback';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy === 'local' && loopback)) {
    return policy === 'local' ? 'must be https (or http on a loopback host)' : 'must be https';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.hash || raw.includes('#')) return 'must not have a fragment';
  if (!query && (url.search || raw.includes('?'))) return 'must not have a query';
  if (kind && kind !== 'public' && !(policy === 'local' && loopback)) {
    return `must not name ${/^[aeiu]/.test(kind) ? 'an' : 'a'} ${kind} address`;
  }
  return undefined;
};
