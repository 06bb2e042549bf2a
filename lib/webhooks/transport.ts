import type { LookupAddress, LookupOptions } from 'node:dns';
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import type { DeliveryError } from '#lib/entities/webhook';
import { DELIVERY_TIMEOUT_MS } from './delivery-records.ts';
import {
  checkWebhookUrl,
  type Resolve,
  type ResolvedAddress,
  resolveAllowed,
  TargetRefused,
  type UrlPolicy,
} from './target-address.ts';

// Not `import … from 'node:http'`: Node would build that module's ESM facade, loading undici (docs/performance.md).
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');
const dns = process.getBuiltinModule('node:dns');

/** What one POST came to: a status, or why there was none that counts. */
interface SendResult {
  responseStatus: number | null;
  error: DeliveryError | null;
  durationMs: number;
}

/** POSTs a body to a subscription's URL (url is checked, resolved and pinned by the transport). */
export type Transport = (url: string, headers: Record<string, string>, body: string) => Promise<SendResult>;

export interface TransportOptions {
  policy: UrlPolicy;
  /** Every address of a host name; node:dns by default. Tests give their own to point a name at an address. */
  resolve?: Resolve;
  timeoutMs?: number;
}

const systemResolve: Resolve = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family as 4 | 6,
  }));

/**
 * The connection's `lookup`: always the address checked a moment before, so a second resolution
 * (DNS rebinding) can never point the request elsewhere. Node asks for one address or, with
 * autoSelectFamily, for all of them.
 */
const pinnedLookup =
  ({ address, family }: ResolvedAddress) =>
  (
    _hostname: string,
    options: LookupOptions,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };

/** The status line is all a delivery needs: a 2xx succeeds, a 3xx is a redirect not followed, anything else fails. */
const resultOf = (status: number): Pick<SendResult, 'responseStatus' | 'error'> => ({
  responseStatus: status,
  error: status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status',
});

const post = (url: URL, target: ResolvedAddress, headers: Record<string, string>, body: string, timeoutMs: number) =>
  new Promise<Pick<SendResult, 'responseStatus' | 'error'>>((resolve) => {
    const options: RequestOptions = {
      method: 'POST',
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      // A connection of its own: a pooled one may lead to an address checked for another delivery.
      agent: false,
      lookup: pinnedLookup(target) as RequestOptions['lookup'],
      signal: AbortSignal.timeout(timeoutMs),
    };
    const send = (url.protocol === 'https:' ? https.request : http.request) as (
      options: RequestOptions,
      callback: (response: IncomingMessage) => void,
    ) => ClientRequest;
    const request = send(options, (response) => {
      resolve(resultOf(response.statusCode ?? 0));
      // The body is not read (nor stored): drop it and the connection.
      response.destroy();
    });
    request.on('error', (error: Error) =>
      resolve({ responseStatus: null, error: error.name === 'AbortError' ? 'timeout' : 'connection_failed' }),
    );
    request.end(body);
  });

/**
 * The transport deliveries use: checks the URL against the policy, resolves the host and refuses
 * unless every address is allowed (lib/webhooks/target-address.ts), then POSTs to that very address
 * (TLS still verifies the host's name) with a timeout, following no redirect.
 */
export const webhookTransport =
  ({ policy, resolve = systemResolve, timeoutMs = DELIVERY_TIMEOUT_MS }: TransportOptions): Transport =>
  async (rawUrl, headers, body) => {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    let target: ResolvedAddress;
    try {
      // The URL again, under this process's policy: what was allowed when it was stored may not be here.
      url = checkWebhookUrl(rawUrl, policy);
      target = await resolveAllowed(url, policy, resolve);
    } catch (error) {
      const reason = error instanceof TargetRefused ? error.reason : 'address_refused';
      return { responseStatus: null, error: reason, durationMs: elapsed() };
    }
    return { ...(await post(url, target, headers, body, timeoutMs)), durationMs: elapsed() };
  };
