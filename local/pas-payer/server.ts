import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { claimStore } from './claims.ts';
import { replayCache } from './client-assertion.ts';
import { type ClientRegistration, clientRegistry } from './clients.ts';
import { BASE_HEADERS, outcomeOf, Refusal, sendFhir, sendJson } from './http.ts';
import { bundleOfClaim, fhirRefusal, inquire, type PayerState, submit } from './operations.ts';
import { OPERATOR_PATHS, type OperatorState, routeOperator } from './operator.ts';
import { STYLESHEET } from './operator-page.ts';
import { type SubscriptionHub, subscriptionHub, watchClaims } from './subscription-hub.ts';
import type { SubscriptionState } from './subscription-notification.ts';
import { isSubscriptionPath, routeSubscriptions, type SubscriptionEndpoints } from './subscription-routes.ts';
import { issueToken, type TokenEndpoint, tokenStore } from './tokens.ts';

/**
 * The local PAS payer: a payer's Da Vinci PAS FHIR endpoint on loopback, beside the sandbox portal, for the
 * payer-API channel to run end to end without a cloud (docs/pas-payer.md). SMART Backend Services token
 * endpoint, Claim/$submit and Claim/$inquire checked against R4 and PAS, decisions by member (seed.ts),
 * an operator who registers clients and decides pended claims, PAS subscriptions notified over rest-hook
 * (subscription-*.ts). State in memory, new at every start.
 */
export interface PasPayerOptions {
  port?: number;
  host?: string;
  /** The operator's token; random by default, printed by main.ts and `npm start`. */
  operatorToken?: string;
  /** Lifetime of an access token (default 300 s). */
  tokenTtlSeconds?: number;
  /** Largest $submit or $inquire body (default 16 MiB: a Bundle carries its attachments). */
  maxBodyBytes?: number;
  /** How long a client's fetched JWKS is kept (default 5 min), and the least time between fetches for an unknown kid (default 5 s). */
  jwksCacheMaxAgeMs?: number;
  jwksCooldownMs?: number;
  /** Clients registered at start (the stack's seed), as registerClient. */
  clients?: ClientRegistration[];
  now?: () => Date;
}

export interface PasPayer {
  /** The origin; the FHIR base is `<url>/fhir`, the token URL `<url>/auth/token`. */
  url: string;
  fhirBaseUrl: string;
  tokenUrl: string;
  operatorToken: string;
  /** The link a browser opens once: `<url>/operator?token=<operatorToken>`. */
  operatorUrl: string;
  /** Registers a client in process (the seed), as POST /register does; returns its client_id. */
  registerClient(registration: ClientRegistration): string;
  /** Claims made from Bundles with this identifier: 1 however often it was submitted. */
  claimsWithIdentifier(value: string, system?: string): number;
  /** $submit calls with this Bundle identifier that passed the checks, retries included. */
  submissionsWithIdentifier(value: string, system?: string): number;
  /** The subscriptions, as the payer holds them (tests). */
  subscriptions(): { id: string; status: SubscriptionState; endpoint: string; eventsSinceStart: number }[];
  /** Tests: the payer turns a subscription off or finds it in error; it is notified no more. */
  setSubscriptionStatus(id: string, status: 'off' | 'error'): void;
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
const ALLOWED = new Map([
  ['/auth/token', 'POST'],
  ['/fhir/Claim/$submit', 'POST'],
  ['/fhir/Claim/$inquire', 'POST'],
  ['/fhir/.well-known/smart-configuration', 'GET'],
  ['/assets/operator.css', 'GET'],
  ...OPERATOR_PATHS,
]);

/** SMART's discovery document: where the token endpoint is and what it takes. */
const smartConfiguration = (tokenUrl: string) => ({
  token_endpoint: tokenUrl,
  grant_types_supported: ['client_credentials'],
  token_endpoint_auth_methods_supported: ['private_key_jwt'],
  token_endpoint_auth_signing_alg_values_supported: ['RS384', 'ES384'],
  scopes_supported: ['system/Claim.write', 'system/ClaimResponse.read'],
  capabilities: ['client-confidential-asymmetric'],
});

type Handlers = {
  payer: PayerState;
  operator: OperatorState;
  token: TokenEndpoint;
  subscriptions: SubscriptionEndpoints;
};

const pathOf = (url: URL) => {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return url.pathname;
  }
};

async function route(handlers: Handlers, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://payer');
  const path = pathOf(url);
  const endpoint = `${req.method} ${path}`;
  if (OPERATOR_PATHS.get(path) === req.method) return routeOperator(handlers.operator, req, res, path, url);
  if (endpoint === 'POST /auth/token') {
    return issueToken(handlers.token, req, res).catch((error: unknown) => {
      if (!(error instanceof Refusal)) throw error;
      sendJson(res, error.status, error.body, { pragma: 'no-cache', ...error.headers });
    });
  }
  if (endpoint === 'POST /fhir/Claim/$submit')
    return submit(handlers.payer, req, res).catch((e) => fhirRefusal(res, e));
  if (endpoint === 'POST /fhir/Claim/$inquire')
    return inquire(handlers.payer, req, res).catch((e) => fhirRefusal(res, e));
  if (isSubscriptionPath(path)) {
    return routeSubscriptions(handlers.subscriptions, req, res, path).catch((e) => fhirRefusal(res, e));
  }
  if (endpoint === 'GET /fhir/.well-known/smart-configuration')
    return sendJson(res, 200, smartConfiguration(handlers.token.tokenUrl));
  if (endpoint === 'GET /assets/operator.css') {
    res.writeHead(200, { ...BASE_HEADERS, 'content-type': 'text/css; charset=utf-8' });
    return void res.end(STYLESHEET);
  }
  const allow = ALLOWED.get(path);
  if (allow) return sendFhir(res, 405, outcomeOf('not-supported', 'This path does not take that method.'), { allow });
  sendFhir(res, 404, outcomeOf('not-found', 'There is no such path.'));
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Hung requests (the hang member) and keep-alive connections would hold close() open forever.
    server.closeAllConnections();
  });
}

/** Heartbeat timers stopped and deliveries under way aborted, then the server. */
function closeSubscriptionsAndServer(hub: SubscriptionHub, server: Server): Promise<void> {
  hub.close();
  return closeServer(server);
}

async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${shown}:${address.port}`;
}

export const startPasPayer = async (options: PasPayerOptions = {}): Promise<PasPayer> => {
  const now = options.now ?? (() => new Date());
  const operatorToken = options.operatorToken ?? randomBytes(32).toString('base64url');
  const clients = clientRegistry({
    jwksCacheMaxAgeMs: options.jwksCacheMaxAgeMs ?? 5 * 60_000,
    jwksCooldownMs: options.jwksCooldownMs ?? 5_000,
  });
  for (const registration of options.clients ?? []) clients.register(registration);
  const claims = claimStore(now);
  const tokens = tokenStore(() => now().getTime());
  const payer: PayerState = {
    clients,
    tokens,
    claims,
    submissions: new Map(),
    faultsServed: new Set(),
    now,
    maxBodyBytes: options.maxBodyBytes ?? 16 * MiB,
  };
  const operator: OperatorState = {
    token: operatorToken,
    csrf: randomBytes(24).toString('base64url'),
    clients,
    claims,
  };
  // The token URL (an assertion's audience) names the port, known once listening: no request comes before.
  let handlers: Handlers | undefined;
  const server = createServer((req, res) => {
    route(handlers!, req, res).catch(() => {
      if (res.headersSent) return res.destroy();
      sendJson(res, 500, { error: 'server_error' });
    });
  });
  const url = await listen(server, options.port ?? 0, options.host ?? '127.0.0.1');
  const tokenUrl = `${url}/auth/token`;
  const token: TokenEndpoint = {
    clients,
    tokenUrl,
    replays: replayCache(),
    now: () => now().getTime(),
    tokens,
    ttlSeconds: options.tokenTtlSeconds ?? 300,
  };
  const hub = subscriptionHub({
    fhirBaseUrl: `${url}/fhir`,
    now,
    answerOf: (claim) => bundleOfClaim(claim, claim.request.identifier, now()),
  });
  watchClaims(claims, hub);
  const subscriptions = { hub, tokens, clients, fhirBaseUrl: `${url}/fhir`, now };
  handlers = { payer, operator, token, subscriptions };
  const key = (value: string, system?: string) => (system ? `${system}|${value}` : value);
  return {
    url,
    fhirBaseUrl: `${url}/fhir`,
    tokenUrl,
    operatorToken,
    operatorUrl: `${url}/operator?token=${operatorToken}`,
    registerClient: (registration) => clients.register(registration).clientId,
    claimsWithIdentifier: (value, system) => claims.countWithIdentifier(key(value, system)),
    submissionsWithIdentifier: (value, system) => payer.submissions.get(key(value, system)) ?? 0,
    subscriptions: () =>
      hub.all().map(({ id, status, terms, eventsSinceStart }) => ({
        id,
        status,
        endpoint: terms.endpoint,
        eventsSinceStart,
      })),
    setSubscriptionStatus: (id, status) => {
      const subscription = hub.all().find((found) => found.id === id);
      if (subscription) hub.setStatus(subscription, status);
    },
    close: () => closeSubscriptionsAndServer(hub, server),
  };
};
